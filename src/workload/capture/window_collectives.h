#pragma once
// The collectives a rank issued inside a capture's window, from chorus's communication log
// (rt/comm_log.h, `CHORUS_RT_LOG`: one JSON line per operation, its backend or group label and its
// issue time on the host's monotonic clock) and the rank's record (its window on the same clock,
// and the groups it created): each with its group's world ranks.
#include <cstdint>
#include <string>
#include <vector>

#include "core/collective_kind.h"
#include "workload/capture/capture_manifest.h"

namespace chorus::workload::capture {

struct WindowCollective {
  CollectiveKind op = CollectiveKind::kAllReduce;  // as logged (all_to_all_single, all_gatherv, ...)
  double bytes = 0;                                // what this rank sent, as logged
  std::string label;                               // the backend or group it ran on
  std::vector<int> ranks;                          // the group's world ranks
  std::size_t line = 0;                            // its line in the log, for messages
  std::int64_t issue_ns = 0;
  // When the runtime started it and when it ended on this rank (host monotonic clock); 0 when the
  // log's line has none (a hand-made log).
  std::int64_t start_ns = 0, end_ns = 0;
};

// The log's operations whose issue time lies in the record's window, in issue order. InputError
// naming the log's file:line and field (not JSON, missing fields, an unknown op), and the label of
// a group the rank's record does not hold.
std::vector<WindowCollective> window_collectives(const std::string& log_path, const RankRecord& record, int world);

}  // namespace chorus::workload::capture
