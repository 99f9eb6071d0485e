#include "eval/study_runs.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <mutex>

#include "core/worker_pool.h"

namespace chorus::eval {

std::string with_time_left(const std::string& label, double left_s) {
  if (!(left_s > 0)) return label;
  return fmt::format("{}; about {:.0f} s left", label, std::ceil(left_s));
}

void run_study(const std::vector<StudyRun>& runs, int workers, const std::function<void(std::size_t)>& run,
               const Progress& progress) {
  const int total = static_cast<int>(runs.size());
  const int pool = std::max(1, workers);
  std::vector<bool> finished(runs.size(), false);
  std::mutex mutex;  // guards done, finished, costs and the progress callback
  int done = 0;
  CostEstimate costs;
  const std::atomic<bool> never{false};
  if (progress && total > 0) progress(0, total, runs.front().label);
  run_pool(runs.size(), pool, never, [&](std::size_t i) {
    const auto start = std::chrono::steady_clock::now();
    run(i);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::lock_guard<std::mutex> lock(mutex);
    finished[i] = true;
    costs.add(runs[i].values, seconds);
    ++done;
    if (!progress) return;
    double left = 0;
    for (std::size_t k = 0; k < runs.size(); ++k)
      if (!finished[k]) left += costs.predict(runs[k].values);
    progress(done, total, with_time_left(runs[i].label, left / pool));
  });
}

}  // namespace chorus::eval
