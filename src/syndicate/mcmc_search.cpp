// Metropolis-Hastings over execution plans (mcmc_search.h).
#include "syndicate/mcmc_search.h"

#include <chrono>
#include <cmath>

#include "core/rng.h"

namespace chorus::syndicate {

SearchResult mcmc_search(Scheduler& scheduler, const Problem& problem, const PlanChoice& start,
                         const SearchOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  SearchResult r;
  PlanChoice current = start;
  double current_cost = scheduler.cost(current, options.sched);
  r.plan = current;
  r.cost_ns = r.start_cost_ns = current_cost;
  r.evaluations = 1;

  std::vector<int> movable;
  for (std::size_t c = 0; c < problem.comms.size(); ++c)
    if (problem.comms[c].options.size() > 1) movable.push_back(static_cast<int>(c));
  if (movable.empty() || !(current_cost > 0)) {
    r.stopped_by = "no-choice";
    r.search_s = elapsed();
    return r;
  }
  // Among plans of equal cost the one that keeps the channels busy for less time is kept: it
  // does the same in less communication work (Fig. 6's b, c, d stay ring, not tree).
  auto work = [&](const PlanChoice& plan) {
    double w = 0;
    for (std::size_t c = 0; c < plan.size(); ++c)
      w += problem.comms[c].options[static_cast<std::size_t>(plan[c])].solo_ns;
    return w;
  };
  double best_work = work(current);
  // The stagnation rule applies only after every option could have been tried a few times:
  // at least min_evaluations, and 4 evaluations per option of the movable comm-ops.
  long options_total = 0;
  for (int c : movable) options_total += static_cast<long>(problem.comms[static_cast<std::size_t>(c)].options.size());
  const long min_evaluations = std::min(options.max_evaluations, std::max(options.min_evaluations, 4 * options_total));
  Rng rng(options.seed);
  const double scale = options.beta / current_cost;
  long last_improvement = 1;
  while (true) {
    if (r.evaluations >= options.max_evaluations) {
      r.stopped_by = "evaluations";
      break;
    }
    if (r.evaluations >= min_evaluations && r.evaluations - last_improvement > r.evaluations / 2) {
      r.stopped_by = "stagnation";
      break;
    }
    if ((r.evaluations & 63) == 0 && elapsed() > options.time_budget_s) {
      r.stopped_by = "budget";
      break;
    }
    const int c = movable[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(movable.size()) - 1))];
    const int count = static_cast<int>(problem.comms[static_cast<std::size_t>(c)].options.size());
    const int old = current[static_cast<std::size_t>(c)];
    int pick = static_cast<int>(rng.uniform_int(0, count - 2));
    if (pick >= old) ++pick;  // any option but the current one
    current[static_cast<std::size_t>(c)] = pick;
    const double cost = scheduler.cost(current, options.sched);
    ++r.evaluations;
    const double alpha = std::min(1.0, std::exp(scale * (current_cost - cost)));
    if (rng.uniform01() < alpha) {
      current_cost = cost;
      ++r.accepted;
      if (cost < r.cost_ns) {
        r.cost_ns = cost;
        r.plan = current;
        best_work = work(current);
        ++r.improvements;
        last_improvement = r.evaluations;
      } else if (cost == r.cost_ns && work(current) < best_work) {
        r.plan = current;
        best_work = work(current);
      }
    } else {
      current[static_cast<std::size_t>(c)] = old;
    }
  }
  r.search_s = elapsed();
  return r;
}

}  // namespace chorus::syndicate
