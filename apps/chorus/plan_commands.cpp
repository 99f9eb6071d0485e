// chorus plan — SYNDICATE's joint optimizer: execution plans and schedule order of a training
// DAG's comm-ops on a multi-channel topology, against the paper's baselines (docs/syndicate.md).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "apps/chorus/commands.h"
#include "apps/chorus/plan_run.h"
#include "core/error.h"
#include "core/text_file.h"
#include "syndicate/joint_optimizer.h"
#include "syndicate/plan_json.h"
#include "syndicate/plan_trace.h"
#include "syndicate/topology.h"
#include "syndicate/workloads.h"

namespace chorus::cli {

namespace {

using namespace chorus::syndicate;

// "10s", "500ms", "2.5" (seconds).
double parse_seconds(const std::string& text, const std::string& field) {
  std::string num = text;
  double scale = 1;
  if (num.size() > 2 && num.compare(num.size() - 2, 2, "ms") == 0) {
    num.resize(num.size() - 2);
    scale = 1e-3;
  } else if (!num.empty() && num.back() == 's') {
    num.pop_back();
  }
  double v = 0;
  std::size_t used = 0;
  try {
    v = std::stod(num, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != num.size() || !std::isfinite(v) || v <= 0 || v * scale > 86400)
    throw InputError(field, fmt::format("expected a duration such as 10s or 500ms (at most a day), got '{}'", text));
  return v * scale;
}

// What a search made, for the table and the JSON summary.
struct PlanRun {
  const workload::Dag& dag;
  const Topology& topo;
  const Problem& problem;
  const std::vector<MethodResult>& results;
  const MethodResult& best;
  const MethodResult& greedy;
  const MethodResult* chosen_base;
  Method baseline;
};

// The --json summary of a search.
nlohmann::json plan_summary(const PlanArgs& a, const PlanRun& run) {
  const auto& [dag, topo, problem, results, best, greedy, chosen_base, baseline] = run;
  nlohmann::json j;
  j["workload"] = dag.name;
  j["topology"] = topo.name;
  j["iterations"] = dag.iterations;
  j["comm_ops"] = problem.comms.size();
  j["iteration_time_ns"] = best.schedule.iteration_ns;
  j["greedy_iteration_time_ns"] = greedy.schedule.iteration_ns;
  j["baseline"] = std::string(to_string(baseline));
  j["baseline_iteration_time_ns"] = chosen_base->schedule.iteration_ns;
  j["speedup_over_baseline"] = chosen_base->schedule.iteration_ns / best.schedule.iteration_ns;
  j["compute_idle_fraction"] = best.schedule.compute_idle_fraction;
  j["evaluations"] = best.evaluations;
  j["search_s"] = best.search_s;
  j["stopped_by"] = best.stopped_by;
  j["seed"] = a.seed;
  auto rows = nlohmann::json::array();
  for (const auto& r : results)
    rows.push_back({{"method", std::string(to_string(r.method))},
                    {"iteration_time_ns", r.schedule.iteration_ns},
                    {"compute_idle_fraction", r.schedule.compute_idle_fraction},
                    {"evaluations", r.evaluations},
                    {"search_s", r.search_s}});
  j["methods"] = rows;
  if (!a.out.empty()) j["plan_file"] = a.out;
  return j;
}

// Checks the options, loads the workload and topology; with --evaluate re-simulates the plan file
// (evaluated(j): its JSON summary, j's "table" the line the table prints), else searches and
// calls searched(run).
void run_planner(const PlanArgs& a, const std::function<void(const nlohmann::json&)>& evaluated,
                 const std::function<void(const PlanRun&)>& searched) {
  if (a.evaluations < 1 || a.evaluations > 100000000)
    throw InputError("--evaluations", fmt::format("must be in 1..1e8, got {}", a.evaluations));
  if (!(a.beta >= 0) || !std::isfinite(a.beta))
    throw InputError("--beta", fmt::format("must be a number >= 0, got {}", a.beta));
  const Method baseline = parse_baseline(a.baseline, "--baseline");
  // Topology host is this machine's backends: mpi only under mpirun (chorus launch starts no
  // MPI job), so a plan made for chorus launch never names it (the runner's host has no mpi there).
  const Topology topo =
      a.topology == "host" && a.launcher == "launch"
          ? with_backends(load_topology(a.topology, a.ranks, "--topology"), {"shm", "gloo"}, "--topology")
          : load_topology(a.topology, a.ranks, "--topology");
  const auto dag = load_workload_dag(a.workload, topo, a.iterations);
  const Problem problem = make_problem(dag, topo, {});
  if (problem.comms.empty())
    throw InputError("--workload", fmt::format("workload '{}' has no collective to plan", dag.name));
  Scheduler scheduler(problem);
  if (!a.evaluate.empty()) {
    // A saved plan re-simulated: its options and order on this workload and topology.
    const auto loaded = read_plan_file(problem, a.evaluate);
    const auto sched = scheduler.run(loaded.plan, loaded.sched, true);
    if (!a.trace.empty()) write_text_file(a.trace, plan_trace(problem, loaded.plan, sched).dump() + "\n");
    evaluated({{"plan_file", a.evaluate},
               {"iteration_time_ns", sched.iteration_ns},
               {"plan_iteration_time_ns", loaded.iteration_time_ns},
               {"compute_idle_fraction", sched.compute_idle_fraction}});
    return;
  }
  SearchOptions search;
  search.seed = a.seed;
  search.beta = a.beta;
  search.max_evaluations = a.evaluations;
  search.min_evaluations = std::min(search.min_evaluations, a.evaluations);
  search.time_budget_s = parse_seconds(a.budget, "--budget");

  std::vector<Method> methods = {Method::kGreedy, Method::kSyndicate, baseline};
  if (a.all) methods = all_methods();
  std::vector<MethodResult> results;
  for (Method m : methods) {
    if (!a.json) fmt::print(stderr, "chorus plan: {} ...\n", to_string(m));
    results.push_back(run_method(m, scheduler, problem, search));
  }
  const MethodResult& best = results[1];
  const MethodResult& greedy = results[0];
  const MethodResult& base = results[2 < results.size() && !a.all ? 2 : 0];
  const MethodResult* chosen_base = &base;
  for (const auto& r : results)
    if (r.method == baseline) chosen_base = &r;

  if (!a.out.empty()) write_json_file(a.out, plan_to_json(problem, best));
  if (!a.trace.empty()) write_text_file(a.trace, plan_trace(problem, best.plan, best.schedule).dump() + "\n");
  searched({dag, topo, problem, results, best, greedy, chosen_base, baseline});
}

void print_plan(const PlanArgs& a, const PlanRun& run) {
  const auto& [dag, topo, problem, results, best, greedy, chosen_base, baseline] = run;
  if (a.json) {
    fmt::print("{}\n", plan_summary(a, run).dump(2));
    return;
  }
  fmt::print("{} on {} ({} NPUs), {} iterations unrolled, {} comm-ops\n", dag.name, topo.name, topo.npus(),
             dag.iterations, problem.comms.size());
  fmt::print("{:<10} {:>14} {:>9} {:>13} {:>11} {:>9}\n", "method", "iteration ms", "vs " + a.baseline, "compute idle",
             "evaluations", "search s");
  for (const auto& r : results)
    fmt::print("{:<10} {:>14.4f} {:>8.3f}x {:>12.1f}% {:>11} {:>9.3f}\n", to_string(r.method),
               r.schedule.iteration_ns / 1e6, chosen_base->schedule.iteration_ns / r.schedule.iteration_ns,
               100 * r.schedule.compute_idle_fraction, r.evaluations, r.search_s);
  fmt::print(
      "syndicate's search stopped by {} (seed {})\n\nplan (first iteration's comm-ops; first step's sequence "
      "number):\n",
      best.stopped_by, a.seed);
  std::vector<int> first_seq(problem.comms.size(), -1);
  for (const auto& s : best.schedule.steps)
    if (first_seq[static_cast<std::size_t>(s.comm)] < 0) first_seq[static_cast<std::size_t>(s.comm)] = s.seq;
  for (std::size_t c = 0; c < problem.comms.size(); ++c) {
    const auto& op = problem.comms[c].op;
    if (dag.nodes[static_cast<std::size_t>(op.node)].iteration != dag.nodes.front().iteration) continue;
    const auto& opt = problem.comms[c].options[static_cast<std::size_t>(best.plan[c])];
    fmt::print("  #{:<4} {:<36} {:<30} {} step(s), {:.3f} ms alone\n", first_seq[c], op.name,
               describe(opt.option, topo), opt.steps.size(), opt.solo_ns / 1e6);
  }
  if (!a.out.empty()) fmt::print("\nwrote {}\n", a.out);
}

void run_plan(const PlanArgs& a) {
  run_planner(
      a,
      [&a](const nlohmann::json& j) {
        if (a.json)
          fmt::print("{}\n", j.dump(2));
        else
          fmt::print("{}: iteration {:.4f} ms (the file predicted {:.4f} ms), compute idle {:.1f}%\n", a.evaluate,
                     j["iteration_time_ns"].get<double>() / 1e6, j["plan_iteration_time_ns"].get<double>() / 1e6,
                     100 * j["compute_idle_fraction"].get<double>());
      },
      [&a](const PlanRun& run) { print_plan(a, run); });
}

}  // namespace

// `chorus plan`'s --json summary (`chorus sweep` runs its points here).
nlohmann::json plan_result(const PlanArgs& a) {
  nlohmann::json out;
  run_planner(
      a, [&out](const nlohmann::json& j) { out = j; }, [&a, &out](const PlanRun& run) { out = plan_summary(a, run); });
  return out;
}

void register_plan_commands(CLI::App& app) {
  static PlanArgs a;
  auto* plan = app.add_subcommand("plan",
                                  "SYNDICATE's joint optimizer: execution plans and motif order for a training DAG, "
                                  "against a baseline (docs/syndicate.md)");
  plan->add_option("--workload", a.workload,
                   "syndicate-fig6, a zoo workload (syndicate-a1 .. a4, dlrm, ...) or a workload YAML file")
      ->capture_default_str();
  plan->add_option("--topology", a.topology, "syndicate-fig6, syndicate-testbed, host, or a topology YAML file")
      ->capture_default_str();
  plan->add_option("--ranks", a.ranks, "processes of topology 'host'")->capture_default_str();
  plan->add_option("--launcher", a.launcher,
                   "what topology 'host' will run under: launch (chorus launch: shm and gloo) or mpirun (adds mpi)")
      ->check(CLI::IsMember({"launch", "mpirun"}))
      ->capture_default_str();
  plan->add_option("--iterations", a.iterations, "training iterations unrolled into the DAG (the paper: 2)")
      ->capture_default_str();
  plan->add_option("--budget", a.budget, "search time budget, e.g. 10s, 500ms")->capture_default_str();
  plan->add_option("--evaluations", a.evaluations, "at most this many plans costed by the search")
      ->capture_default_str();
  plan->add_option("--seed", a.seed, "random seed of the search")->capture_default_str();
  plan->add_option("--beta", a.beta, "Metropolis-Hastings beta, relative to the greedy plan's cost")
      ->capture_default_str();
  plan->add_option("--baseline", a.baseline, "bs+ | s-exec | s-sched | fifo")->capture_default_str();
  plan->add_flag("--all", a.all, "run every baseline, not just --baseline");
  plan->add_option("--out", a.out, "write the plan (JSON) here");
  plan->add_option("--evaluate", a.evaluate,
                   "instead of searching: re-simulate this plan file on --workload and --topology");
  plan->add_option("--trace", a.trace,
                   "write a Chrome-trace timeline of the plan (compute stream, one track per channel; Perfetto)");
  plan->add_flag("--json", a.json, "print a JSON summary instead of the table");
  plan->callback([] { run_plan(a); });
}

}  // namespace chorus::cli
