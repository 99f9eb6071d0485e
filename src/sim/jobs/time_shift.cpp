#include "sim/jobs/time_shift.h"

#include "core/memory_budget.h"

namespace chorus::sim::jobs {

void ShiftSearchOptions::validate() const {
  require_range(steps, 1, kMaxShiftSteps, "steps");
  require_range(rounds, 1, kMaxShiftRounds, "rounds");
}

ShiftSearchResult search_time_shifts(const net::GraphNetwork& fabric, const std::vector<SharedJob>& jobs,
                                     const std::vector<JobTimeline>& alone, const ShiftSearchOptions& options) {
  options.validate();
  auto shifted = jobs;
  std::vector<const SharedJob*> all;
  for (const auto& job : shifted) all.push_back(&job);
  ShiftSearchResult r;
  r.shifts_ns.assign(jobs.size(), 0.0);
  // The slowdowns with the current shifts.
  const auto evaluate = [&](std::vector<double>& slowdowns) {
    for (std::size_t j = 0; j < jobs.size(); ++j) shifted[j].start_ns = jobs[j].start_ns + r.shifts_ns[j];
    const auto run = simulate_shared_fabric(fabric, all, options.batch_tolerance, 0.0, options.timed_faults);
    ++r.evaluations;
    double total = 0;
    slowdowns.clear();
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const double a = alone[j].result.total_ns;
      slowdowns.push_back(a > 0 ? run.jobs[j].result.total_ns / a : 1.0);
      total += slowdowns.back();
    }
    return total;
  };
  r.unshifted_total_slowdown = r.total_slowdown = evaluate(r.unshifted_slowdowns);
  r.slowdowns = r.unshifted_slowdowns;
  std::vector<double> trial;
  for (int round = 0; round < options.rounds; ++round) {
    bool changed = false;
    for (std::size_t j = 1; j < jobs.size(); ++j) {
      const double period = alone[j].result.total_ns / alone[j].result.iterations;
      const double kept = r.shifts_ns[j];
      double best = kept;
      for (int i = 0; i < options.steps; ++i) {
        const double shift = period * i / options.steps;
        if (shift == kept) continue;
        r.shifts_ns[j] = shift;
        const double total = evaluate(trial);
        if (total < r.total_slowdown * (1 - 1e-9)) {  // not a rounding of the same times
          r.total_slowdown = total;
          r.slowdowns = trial;
          best = shift;
          changed = true;
        }
      }
      r.shifts_ns[j] = best;
    }
    if (!changed) break;
  }
  return r;
}

}  // namespace chorus::sim::jobs
