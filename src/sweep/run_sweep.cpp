#include "sweep/run_sweep.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <set>

#include "core/error.h"
#include "core/cost_estimate.h"
#include "sweep/point_key.h"
#include "core/worker_pool.h"

namespace chorus::sweep {
namespace {

ParamValues values_of(const Point& p) {
  ParamValues v;
  for (const auto& [name, value] : p) v[name] = value.text;
  return v;
}

ParamValues values_of(const nlohmann::ordered_json& params) {
  ParamValues v;
  for (const auto& [name, value] : params.items()) v[name] = value.get<std::string>();
  return v;
}

nlohmann::ordered_json params_json(const Point& p) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, value] : p) j[name] = value.text;
  return j;
}

}  // namespace

std::vector<std::pair<std::string, const Point*>> distinct_points(const Spec& spec) {
  std::vector<std::pair<std::string, const Point*>> out;
  std::set<std::string> seen;
  for (const auto& p : spec.points) {
    auto key = point_key(spec.command, p);
    if (seen.insert(key).second) out.emplace_back(std::move(key), &p);
  }
  return out;
}

SweepSummary run_sweep(const Spec& spec, const SweepStore& store, const PointRunner& runner,
                       const SweepOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto all = distinct_points(spec);
  SweepSummary summary;
  summary.points = all.size();
  std::vector<std::pair<std::string, const Point*>> share;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (static_cast<int>(i % static_cast<std::size_t>(options.ranks)) == options.rank) share.push_back(all[i]);
  summary.share = share.size();
  std::vector<std::pair<std::string, const Point*>> todo;
  for (const auto& kp : share) {
    if (store.done.count(kp.first))
      ++summary.already;
    else
      todo.push_back(kp);
  }
  CostEstimate costs;  // seeded with the rows of earlier runs
  for (const auto& row : store.earlier)
    if (row.error.empty()) costs.add(values_of(row.params), row.seconds);
  std::vector<ParamValues> todo_values;
  for (const auto& kp : todo) todo_values.push_back(values_of(*kp.second));
  double left_s = 0;
  for (const auto& v : todo_values) left_s += costs.predict(v);
  const std::size_t every = std::max<std::size_t>(64, todo.size() / 20);

  std::mutex mutex;  // guards the progress below
  Progress progress{summary.already, summary.share, 0, 0};
  const auto start = Clock::now();
  const std::atomic<bool> never{false};
  run_pool(todo.size(), options.workers, options.stop ? *options.stop : never, [&](std::size_t i) {
    const auto& [key, point] = todo[i];
    Row row{key, spec.command, params_json(*point), nlohmann::ordered_json::object(), "", 0, options.rank};
    const auto t0 = Clock::now();
    try {
      row.metrics = runner(*point);
    } catch (const InputError& e) {
      row.error = e.what();
    }
    row.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    store.write(row);
    const std::lock_guard<std::mutex> lock(mutex);
    left_s -= costs.predict(todo_values[i]);  // what this point was predicted to take
    costs.add(todo_values[i], row.seconds);
    ++summary.ran;
    ++progress.done;
    progress.elapsed_s = std::chrono::duration<double>(Clock::now() - start).count();
    // Re-estimated now and then from every cost seen so far (each point's own, not the count).
    if ((summary.ran & (summary.ran - 1)) == 0 || summary.ran % every == 0) {
      left_s = 0;
      for (std::size_t k = i + 1; k < todo.size(); ++k) left_s += costs.predict(todo_values[k]);
    }
    progress.left_s = std::max(0.0, left_s) / std::max(1, options.workers);
    if (options.on_progress) options.on_progress(progress);
  });
  summary.stopped = summary.already + summary.ran < summary.share;
  return summary;
}

}  // namespace chorus::sweep
