#pragma once
// A study's independent simulations on the worker pool (core/worker_pool.h): run(i) for each of
// the runs, at most `workers` at once. Each run writes its own slot, so a study that assembles its
// rows from the slots afterwards has the serial run's rows in the serial order whatever the
// workers. After each run, one at a time, `progress` hears the runs done, the runs in all and the
// run's label followed by the time left: the runs not done yet, each predicted from the times of
// the runs done with its parameter values (core/cost_estimate.h), over the workers, and never less
// than what a run in flight is still expected to take (time_left_s). The runs are
// taken in spread_order, so that the first ones done sample the whole study (every workload,
// topology, size) and the estimate holds early, not only the first parameter value's runs.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/cost_estimate.h"
#include "eval/themis_microbench.h"

namespace chorus::eval {

struct StudyRun {
  ParamValues values;  // what sets its cost (topology, size, scheduler, ...)
  std::string label;   // for the progress line
};

// workers < 1 counts as 1. The first exception of a run stops the pool and is rethrown.
void run_study(const std::vector<StudyRun>& runs, int workers, const std::function<void(std::size_t)>& run,
               const Progress& progress);

// 0 .. n-1, each once, in steps of about n / 1.618 (modulo n, a step coprime with n).
std::vector<std::size_t> spread_order(std::size_t n);

// A run of a study in flight: its predicted cost and how long it has run so far, in seconds.
struct RunInFlight {
  double predicted_s = 0;
  double elapsed_s = 0;
};

// What a run in flight is expected to still take: its prediction minus what it has run; once it
// has run as long as predicted, the prediction was wrong and it is taken to be halfway (as long
// again as it has run).
double expected_remaining_s(const RunInFlight& run);

// The time left of a study: the queued runs' predicted costs and the in-flight runs' expected
// remainders shared by the workers (< 1 counts as 1), but never less than the longest remainder
// in flight nor the largest queued cost (a run is not split between workers). So one long run
// that has outlived its prediction is not reported as about to end.
double time_left_s(const std::vector<double>& queued_s, const std::vector<RunInFlight>& in_flight, int workers);

// "LABEL; about N s left" (N rounded up; "LABEL" alone before any estimate and once none is left).
std::string with_time_left(const std::string& label, double left_s);

}  // namespace chorus::eval
