#pragma once
// A study's independent simulations on the worker pool (core/worker_pool.h): run(i) for each of
// the runs, at most `workers` at once. Each run writes its own slot, so a study that assembles its
// rows from the slots afterwards has the serial run's rows in the serial order whatever the
// workers. After each run, one at a time, `progress` hears the runs done, the runs in all and the
// run's label followed by the time left: the runs not done yet, each predicted from the times of
// the runs done with its parameter values (core/cost_estimate.h), over the workers. The runs are
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

// "LABEL; about N s left" (N rounded up; "LABEL" alone before any estimate and once none is left).
std::string with_time_left(const std::string& label, double left_s);

}  // namespace chorus::eval
