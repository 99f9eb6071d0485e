#pragma once
// Time-shifting jobs so that their communication phases interleave on shared links (the idea of
// CASSINI, NSDI '24). Not CASSINI's affinity graph: a plain coordinate descent over a grid of start
// shifts, each candidate simulated on the shared fabric (docs/shared-fabric.md).
#include <vector>

#include "net/graph/graph_network.h"
#include "sim/jobs/shared_fabric.h"

namespace chorus::sim::jobs {

// Bounds of a shift search: every step of every round simulates the jobs again.
inline constexpr int kMaxShiftSteps = 1000;
inline constexpr int kMaxShiftRounds = 1000;

struct ShiftSearchOptions {
  int steps = 8;   // shifts tried per job: i / steps of its iteration time alone, i = 0..steps-1
  int rounds = 2;  // passes over the jobs
  double batch_tolerance = 0;
  std::vector<TimedLinkFault> timed_faults;  // link faults during the run (JobMix::timed_faults)

  // InputError naming the field: steps, rounds outside 1..kMaxShiftSteps, 1..kMaxShiftRounds.
  void validate() const;
};

struct ShiftSearchResult {
  std::vector<double> shifts_ns;  // per job, added to its start; the first job's is 0
  std::vector<double> slowdowns;  // per job with the shifts: total together / total alone
  std::vector<double> unshifted_slowdowns;
  double total_slowdown = 0;  // sum over the jobs
  double unshifted_total_slowdown = 0;
  int evaluations = 0;  // shared-fabric simulations run
};

// `alone[j]`: job j alone (run_job_mix). Job 0 keeps its start; for each other job in turn, every
// shift of the grid is simulated with the others' current shifts, and the job keeps the one of the
// least total slowdown (the earliest on ties, and only by more than a relative 1e-9, so no shift
// unless one helps). A shift is a one-time delay not counted in the slowdown: the jobs need enough
// iterations to overlap whatever the shift, else delaying one past the other's end "wins".
// InputError for steps or rounds outside 1..1000.
ShiftSearchResult search_time_shifts(const net::GraphNetwork& fabric, const std::vector<SharedJob>& jobs,
                                     const std::vector<JobTimeline>& alone, const ShiftSearchOptions& options = {});

}  // namespace chorus::sim::jobs
