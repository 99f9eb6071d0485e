// The joint optimizer and its baselines (joint_optimizer.h).
#include "syndicate/joint_optimizer.h"

#include <chrono>

#include "core/error.h"
#include "core/suggest.h"

namespace chorus::syndicate {

std::string_view to_string(Method m) {
  switch (m) {
    case Method::kGreedy:
      return "greedy";
    case Method::kSyndicate:
      return "syndicate";
    case Method::kSExec:
      return "s-exec";
    case Method::kSSched:
      return "s-sched";
    case Method::kBsPlus:
      return "bs+";
    case Method::kFifo:
      return "fifo";
  }
  return "?";
}

const std::vector<Method>& all_methods() {
  static const std::vector<Method> m = {Method::kGreedy, Method::kSyndicate, Method::kSExec,
                                        Method::kSSched, Method::kBsPlus,    Method::kFifo};
  return m;
}

Method parse_baseline(const std::string& text, const std::string& field) {
  for (Method m : {Method::kBsPlus, Method::kSExec, Method::kSSched, Method::kFifo})
    if (text == to_string(m)) return m;
  if (text == "bs" || text == "bsplus") return Method::kBsPlus;
  throw InputError(field, "unknown baseline '" + text + "'" + did_you_mean(text, {"bs+", "s-exec", "s-sched", "fifo"}) +
                              " (bs+, s-exec, s-sched, fifo)");
}

namespace {

// Coordinate descent over each comm-op's segment count (joint_optimizer.h).
long segment_oracle(Scheduler& scheduler, const Problem& problem, PlanChoice& plan, const SchedOptions& sched) {
  long evaluations = 1;
  double best = scheduler.cost(plan, sched);
  for (int pass = 0; pass < 4; ++pass) {
    bool changed = false;
    for (std::size_t c = 0; c < problem.comms.size(); ++c) {
      const auto& options = problem.comms[c].options;
      const PlanOption& cur = options[static_cast<std::size_t>(plan[c])].option;
      const int keep = plan[c];
      for (std::size_t o = 0; o < options.size(); ++o) {
        const PlanOption& cand = options[o].option;
        if (static_cast<int>(o) == keep || cand.algorithm != cur.algorithm || cand.spline != cur.spline ||
            cand.path != cur.path || cand.alt_path != cur.alt_path)
          continue;
        const int prev = plan[c];
        plan[c] = static_cast<int>(o);
        const double cost = scheduler.cost(plan, sched);
        ++evaluations;
        if (cost < best) {
          best = cost;
          changed = true;
        } else {
          plan[c] = prev;
        }
      }
    }
    if (!changed) break;
  }
  return evaluations;
}

}  // namespace

MethodResult run_method(Method m, Scheduler& scheduler, const Problem& problem, const SearchOptions& search) {
  const auto t0 = std::chrono::steady_clock::now();
  MethodResult r;
  r.method = m;
  // The baselines start from today's stack's plan (Sec. 6.4); SYNDICATE and S-Exec from the
  // greedy execution planner's, over every option.
  const bool standard = m == Method::kSSched || m == Method::kBsPlus || m == Method::kFifo;
  r.plan = standard ? problem.standard_plan() : problem.greedy_plan();
  switch (m) {
    case Method::kGreedy:
      r.sched = {Order::kCriticalPath, false};
      break;
    case Method::kSyndicate:
      r.sched = {Order::kCriticalPath, false};
      break;
    case Method::kSExec:
      r.sched = {Order::kFifo, false};
      break;
    case Method::kSSched:
      r.sched = {Order::kCriticalPath, false};
      break;
    case Method::kBsPlus:
      r.sched = {Order::kLifo, true};
      break;
    case Method::kFifo:
      r.sched = {Order::kFifo, true};
      break;
  }
  if (m == Method::kSyndicate || m == Method::kSExec) {
    SearchOptions o = search;
    o.sched = r.sched;
    const auto s = mcmc_search(scheduler, problem, r.plan, o);
    r.plan = s.plan;
    r.evaluations = s.evaluations;
    r.stopped_by = s.stopped_by;
  } else if (m == Method::kSSched || m == Method::kBsPlus) {
    r.evaluations = segment_oracle(scheduler, problem, r.plan, r.sched);
  } else {
    r.evaluations = 1;
  }
  r.schedule = scheduler.run(r.plan, r.sched, true);
  r.search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace chorus::syndicate
