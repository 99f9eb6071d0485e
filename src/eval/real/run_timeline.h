#pragma once
// One run of a plan as every rank lived it, beside the optimizer's prediction: each rank's step
// issue and completion times and compute nodes (RunStats), gathered on every rank; per step the
// measured time against the schedule's; a Chrome trace (Perfetto, chrome://tracing) with the
// prediction (syndicate/plan_trace.h) above one process per rank. `chorus run workload --trace`.
//
// Times are ns since each rank's enforcer start, which the ranks reach within a barrier's skew
// of each other (microseconds on one host).
#include <nlohmann/json.hpp>
#include <vector>

#include "eval/real/plan_execution.h"

namespace chorus::eval {

struct RankTimeline {
  std::vector<double> issued_ns, completed_ns;                             // per sequence number
  std::vector<char> idle;                                                  // per sequence number: no part in the step
  std::vector<double> compute_ready_ns, compute_start_ns, compute_end_ns;  // per DAG node (compute nodes)
};

// Every rank's timeline of run `rs` under `active`, on every rank. Collective.
std::vector<RankTimeline> gather_timelines(const Job& job, const Active& active, const RunStats& rs);

// Measured against predicted, summed over the run: each step from the last participant's issue
// to the last participant's completion (the prediction starts a step on every rank at once),
// each compute node's slowest rank; the ranks' spread in issuing the same step.
struct TimelineComparison {
  double step_ns = 0, predicted_step_ns = 0;
  double compute_ns = 0, predicted_compute_ns = 0;
  double issue_spread_ns = 0;  // sum over steps of (last - first participant's issue)
  double makespan_ns = 0, predicted_makespan_ns = 0;
  int steps = 0;  // steps with a participant and a channel
};

// Per sequence number: the step from the last participant's issue to the last participant's
// completion; -1 for a step without a participant or a channel.
std::vector<double> step_times_in_run(const Active& active, const std::vector<RankTimeline>& ranks);

// The steps of the active plan's options retimed by `took` (step_times_in_run); every other
// option, and a step not measured, keeps its time.
void retime_from_run(syndicate::Problem& problem, const Active& active, const std::vector<double>& took);

TimelineComparison compare_to_prediction(const syndicate::Problem& problem, const Active& active,
                                         const std::vector<RankTimeline>& ranks);
nlohmann::json to_json(const TimelineComparison& c);

// The Chrome trace: the prediction (processes "compute" and "channels") and, per rank, a
// process with its compute track (with the waits for comm-ops before a node) and one track per
// channel holding the steps it issued.
nlohmann::json run_trace(const syndicate::Problem& problem, const Active& active,
                         const std::vector<RankTimeline>& ranks);

}  // namespace chorus::eval
