#include "sched/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "coll/collective.h"
#include "core/error.h"
#include "core/suggest.h"
#include "sched/baseline.h"

namespace chorus::sched {

const std::vector<std::string>& scheduler_names() {
  static const std::vector<std::string> names = {"baseline", "themis-fifo", "themis-scf", "ideal"};
  return names;
}

SchedulerSpec parse_scheduler(const std::string& name, const std::string& field) {
  if (name == "baseline") return {name, SchedulerKind::kBaseline, IntraDimPolicy::kFifo};
  // ASTRA-sim's order with its LIFO scheduling policy (an ASTRA-sim system file's choice).
  if (name == "baseline-lifo") return {name, SchedulerKind::kBaseline, IntraDimPolicy::kLifo};
  if (name == "themis-fifo") return {name, SchedulerKind::kThemis, IntraDimPolicy::kFifo};
  if (name == "themis-scf" || name == "themis")
    return {"themis-scf", SchedulerKind::kThemis, IntraDimPolicy::kSmallestChunkFirst};
  if (name == "ideal") return {name, SchedulerKind::kIdeal, IntraDimPolicy::kFifo};
  // "fifo" and "scf" are the second half of a name: point at the whole one.
  std::string hint = did_you_mean(name, scheduler_names());
  if (hint.empty() && (name == "fifo" || name == "scf")) hint = fmt::format(" (did you mean 'themis-{}'?)", name);
  throw InputError(field, fmt::format("unknown scheduler '{}'{}; choose one of: {} ('themis' is short for themis-scf)",
                                      name, hint, fmt::join(scheduler_names(), ", ")));
}

Schedule make_schedule(const net::Network& network, CollectiveKind op, double size_bytes, int num_chunks,
                       const SchedulerSpec& spec, const ThemisOptions& themis) {
  if (std::ranges::find(coll::kThemisCollectives, op) == std::end(coll::kThemisCollectives))
    throw InputError("op", fmt::format("Themis schedules all_reduce, reduce_scatter, all_gather and all_to_all, "
                                       "not {}",
                                       to_string(op)));
  switch (spec.kind) {
    case SchedulerKind::kThemis: {
      ThemisOptions options = themis;
      options.policy = spec.policy;
      return themis_schedule(network, op, size_bytes, num_chunks, options);
    }
    case SchedulerKind::kIdeal: {
      Schedule s = baseline_schedule(network, op, size_bytes, num_chunks);
      s.scheduler = "ideal";
      return s;
    }
    case SchedulerKind::kBaseline:
      break;
  }
  Schedule s = baseline_schedule(network, op, size_bytes, num_chunks);
  s.policy = spec.policy;
  s.scheduler = spec.name;
  return s;
}

}  // namespace chorus::sched
