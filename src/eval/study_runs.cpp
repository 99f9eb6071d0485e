#include "eval/study_runs.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <mutex>
#include <numeric>
#include <optional>

#include "core/worker_pool.h"

namespace chorus::eval {

std::string with_time_left(const std::string& label, double left_s) {
  if (!(left_s > 0)) return label;
  return fmt::format("{}; about {:.0f} s left", label, std::ceil(left_s));
}

double expected_remaining_s(const RunInFlight& run) {
  return run.elapsed_s < run.predicted_s ? run.predicted_s - run.elapsed_s : run.elapsed_s;
}

double time_left_s(const std::vector<double>& queued_s, const std::vector<RunInFlight>& in_flight, int workers) {
  double sum = 0, longest = 0;
  for (double q : queued_s) {
    sum += q;
    longest = std::max(longest, q);
  }
  for (const auto& r : in_flight) {
    const double left = expected_remaining_s(r);
    sum += left;
    longest = std::max(longest, left);
  }
  return std::max(sum / std::max(1, workers), longest);
}

std::vector<std::size_t> spread_order(std::size_t n) {
  std::vector<std::size_t> order(n);
  if (n == 0) return order;
  // A stride near n / golden ratio, coprime with n: i x stride mod n visits every index once.
  auto stride = static_cast<std::size_t>(std::llround(static_cast<double>(n) * 0.6180339887498949));
  stride = std::max<std::size_t>(stride, 1);
  while (std::gcd(stride, n) != 1) ++stride;
  for (std::size_t i = 0; i < n; ++i) order[i] = i * stride % n;
  return order;
}

void run_study(const std::vector<StudyRun>& runs, int workers, const std::function<void(std::size_t)>& run,
               const Progress& progress) {
  const int total = static_cast<int>(runs.size());
  const int pool = std::max(1, workers);
  std::vector<bool> finished(runs.size(), false);
  using Clock = std::chrono::steady_clock;
  std::vector<std::optional<Clock::time_point>> started(runs.size());
  std::mutex mutex;  // guards done, finished, started, costs and the progress callback
  int done = 0;
  CostEstimate costs;
  const std::atomic<bool> never{false};
  const auto order = spread_order(runs.size());
  if (progress && total > 0) progress(0, total, runs[order.front()].label);
  run_pool(runs.size(), pool, never, [&](std::size_t taken) {
    const std::size_t i = order[taken];
    const auto start = Clock::now();
    {
      const std::lock_guard<std::mutex> lock(mutex);
      started[i] = start;
    }
    run(i);
    const auto end = Clock::now();
    const std::lock_guard<std::mutex> lock(mutex);
    finished[i] = true;
    costs.add(runs[i].values, std::chrono::duration<double>(end - start).count());
    ++done;
    if (!progress) return;
    std::vector<double> queued;
    std::vector<RunInFlight> in_flight;
    for (std::size_t k = 0; k < runs.size(); ++k) {
      if (finished[k]) continue;
      const double predicted = costs.predict(runs[k].values);
      if (started[k])
        in_flight.push_back({predicted, std::chrono::duration<double>(end - *started[k]).count()});
      else
        queued.push_back(predicted);
    }
    progress(done, total, with_time_left(runs[i].label, time_left_s(queued, in_flight, pool)));
  });
}

}  // namespace chorus::eval
