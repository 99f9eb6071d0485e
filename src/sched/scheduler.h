#pragma once
// Scheduler names as on the CLI: baseline, themis-fifo, themis-scf, ideal.
#include <string>
#include <vector>

#include "coll/collective.h"
#include "net/network.h"
#include "sched/schedule.h"
#include "sched/themis.h"

namespace chorus::sched {

enum class SchedulerKind { kBaseline, kThemis, kIdeal };

struct SchedulerSpec {
  std::string name;
  SchedulerKind kind = SchedulerKind::kBaseline;
  IntraDimPolicy policy = IntraDimPolicy::kFifo;
};

const std::vector<std::string>& scheduler_names();
// Throws InputError naming `field` and listing the valid names.
SchedulerSpec parse_scheduler(const std::string& name, const std::string& field = "scheduler");

// The chunk schedule a scheduler produces. "ideal" has no chunk schedule of its own; it
// returns the baseline schedule, and the simulator reports the ideal bound for it. Being a
// bound, it is never saved or loaded as a schedule (docs/schedule-format.md).
Schedule make_schedule(const net::Network& network, CollectiveKind op, double size_bytes, int num_chunks,
                       const SchedulerSpec& spec, const ThemisOptions& themis = {});

}  // namespace chorus::sched
