#pragma once
// `chorus profile`: the communication logs of a run (rt/comm_log.h, one PREFIX.<rank>.jsonl per
// rank) summarised as MCR-DL's Figs. 1 and 12 do: communication time per operation and backend;
// and the ranks consistently last at the collectives, with the time the others lost waiting for
// them (diagnose/stragglers.h, the analysis `chorus doctor --stragglers` runs on flight records).
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnose/stragglers.h"

namespace chorus::rt {

struct LoggedOp {
  int rank = 0;
  std::string backend, op, dtype;
  double bytes = 0;
  bool async_op = false, ok = true;
  double issue_ns = 0, start_ns = 0, end_ns = 0;
};

struct ProfileRow {
  std::string op, backend;
  double calls = 0;         // per rank, on average
  double bytes = 0;         // per rank, on average
  double busy_ns = 0;       // sum of end - start per rank, on average
  double queued_ns = 0;     // sum of start - issue per rank, on average
  double mean_call_ns = 0;  // busy_ns / calls
  double share = 0;         // of the busy time of all rows
};

// A log's clock (its header): the host, and the offset to rank 0's clock estimated at init with
// its error bound (rt/clock_offset.h), if the log has one.
struct LogClock {
  std::string host;
  bool has_offset = false;
  double to_rank0_ns = 0, error_ns = 0;
};

struct CommProfile {
  int world_size = 0;
  std::map<int, LogClock> clocks;  // per rank
  // The logs are of several hosts and every one has an offset: the times of ops are on rank 0's
  // clock (each rank's shifted by its offset), within the largest error bound.
  bool aligned = false;
  double clock_error_ns = 0;
  std::vector<std::string> files;
  std::vector<LoggedOp> ops;
  std::vector<ProfileRow> rows;  // most busy time first
  int failed = 0;
  diagnose::StragglerReport stragglers;
};

// The collectives' starts (start_ns) in the logs, numbered per rank and log name (backend, group,
// or backend:algorithm) in the order they started: ranks issue the same collectives in the same
// order, and one name's collectives run one after another on their lane, so the k-th of a name is
// the same call on every rank. Sends and receives are not collectives.
std::vector<diagnose::CollectiveStart> collective_starts(const std::vector<LoggedOp>& ops);

// `inputs`: log files, or prefixes (PREFIX.<rank>.jsonl for every rank of the run). Errors
// (InputError) name the file, the line and the field; a run's ranks must all be there.
CommProfile read_comm_logs(const std::vector<std::string>& inputs);

std::string format_profile(const CommProfile& p);
nlohmann::json profile_json(const CommProfile& p);
// Chrome trace-event JSON: one process per rank, one thread per backend, one slice per operation.
nlohmann::json profile_trace(const CommProfile& p);
// DIR/profile.csv (the rows) and, through chorus.plot, DIR/profile.svg. Returns the paths.
std::vector<std::string> write_profile_outputs(const CommProfile& p, const std::string& dir);

}  // namespace chorus::rt
