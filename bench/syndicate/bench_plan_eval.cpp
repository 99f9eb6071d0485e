// SYNDICATE's joint optimizer: plan evaluations per second (issue 10's target: >= 10,000 per
// second for the A2-like DAG). Per workload on its topology: optSched on random plans (critical
// path, then FIFO on one stream), the MCMC search end to end, and, side by side, the same
// evaluation done the naive way: options and their steps rebuilt for every plan (make_problem
// + one schedule), which is what a search without the precomputed option table pays.
//   bench_plan_eval [WORKLOAD:TOPOLOGY ...]   (default syndicate-fig6:syndicate-fig6,
//                                              dlrm:syndicate-testbed, syndicate-a2:syndicate-testbed)
#include <sys/resource.h>

#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/rng.h"
#include "syndicate/mcmc_search.h"
#include "syndicate/workloads.h"

using namespace chorus::syndicate;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void bench(const std::string& workload, const std::string& topology) {
  const Topology topo = load_topology(topology, 4, "topology");
  chorus::workload::Dag dag;
  try {
    dag = load_workload_dag(workload, topo, 2);
  } catch (const chorus::InputError& e) {
    fmt::print("{:<14} {:<18} skipped: {}\n", workload, topology, e.what());
    return;
  }
  auto t0 = std::chrono::steady_clock::now();
  const Problem p = make_problem(dag, topo, {});
  const double build_s = seconds_since(t0);
  std::size_t options = 0;
  for (const auto& c : p.comms) options += c.options.size();
  Scheduler s(p);
  chorus::Rng rng(3);
  std::vector<PlanChoice> plans;
  for (int i = 0; i < 200; ++i) {
    PlanChoice plan;
    for (const auto& c : p.comms)
      plan.push_back(static_cast<int>(rng.uniform_int(0, static_cast<std::int64_t>(c.options.size()) - 1)));
    plans.push_back(plan);
  }
  double sink = 0;
  auto rate = [&](const SchedOptions& o, double min_s) {
    long n = 0;
    const auto start = std::chrono::steady_clock::now();
    while (seconds_since(start) < min_s)
      for (const auto& plan : plans) {
        sink += s.cost(plan, o);
        ++n;
      }
    return n / seconds_since(start);
  };
  const double cp = rate({Order::kCriticalPath, false}, 1.0);
  const double fifo = rate({Order::kFifo, true}, 0.5);
  // Naive: every evaluation rebuilds the options and their steps.
  long naive_n = 0;
  t0 = std::chrono::steady_clock::now();
  while (seconds_since(t0) < 1.0) {
    const Problem q = make_problem(dag, topo, {});
    Scheduler sq(q);
    sink += sq.cost(plans[static_cast<std::size_t>(naive_n) % plans.size()], {});
    ++naive_n;
  }
  const double naive = naive_n / seconds_since(t0);
  SearchOptions so;
  so.max_evaluations = 20000;
  so.min_evaluations = 20000;  // the whole budget, no early stop: a rate, not a result
  t0 = std::chrono::steady_clock::now();
  const auto r = mcmc_search(s, p, p.greedy_plan(), so);
  const double mcmc = r.evaluations / seconds_since(t0);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  fmt::print(
      "{:<14} {:<18} {:>5} nodes {:>4} comm-ops {:>6} options  build {:>6.3f} s  optSched {:>9.0f}/s  fifo {:>9.0f}/s  "
      "mcmc {:>9.0f}/s  naive {:>7.1f}/s  ({:.0f}x)  peak RSS {} MB\n",
      workload, topology, dag.nodes.size(), p.comms.size(), options, build_s, cp, fifo, mcmc, naive, cp / naive,
      ru.ru_maxrss / 1024);
  if (sink < 0) fmt::print("{}\n", sink);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::pair<std::string, std::string>> cases;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto colon = a.find(':');
    if (colon == std::string::npos) {
      fmt::print(stderr, "bench_plan_eval: expected WORKLOAD:TOPOLOGY, got '{}'\n", a);
      return 2;
    }
    cases.emplace_back(a.substr(0, colon), a.substr(colon + 1));
  }
  if (cases.empty())
    cases = {
        {"syndicate-fig6", "syndicate-fig6"}, {"dlrm", "syndicate-testbed"}, {"syndicate-a2", "syndicate-testbed"}};
  try {
    for (const auto& [w, t] : cases) bench(w, t);
  } catch (const chorus::InputError& e) {
    fmt::print(stderr, "bench_plan_eval: {}\n", e.what());
    return 2;
  }
  return 0;
}
