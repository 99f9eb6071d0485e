// `chorus run workload` (workload_runner.h, docs/syndicate.md "Running a plan").
#include "eval/real/workload_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <utility>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/fnv1a.h"
#include "core/rng.h"
#include "rt/enforcer/enforcer.h"
#include "rt/enforcer/plan_switch.h"
#include "eval/real/plan_execution.h"
#include "eval/real/run_timeline.h"
#include "core/text_file.h"
#include "rt/rendezvous/mpi_env.h"
#include "rt/runtime.h"
#include "syndicate/joint_optimizer.h"
#include "syndicate/plan_json.h"
#include "syndicate/workloads.h"

namespace chorus::eval {

using rt::all_gather;
using rt::all_reduce;
using rt::DType;
using rt::ReduceOp;
using rt::two_phase_commit;

WorkloadReport run_workload_on_ranks(const WorkloadRunOptions& o) {
  require_range(o.repeat, 1, kMaxRepeats, "repeat");
  (void)parse_method(o.method);
  (void)parse_method(o.switch_method, "switch_method");
  if (o.switch_after < 0) throw InputError("switch_after", fmt::format("must be >= 0, got {}", o.switch_after));
  if (o.costs != "measured" && o.costs != "model" && o.costs != "in-run")
    throw InputError("costs", "must be measured, in-run or model, got '" + o.costs + "'");
  if (o.warm_up_runs < 1 || o.warm_up_runs > 100)
    throw InputError("warm_up_runs", fmt::format("must be in 1..100, got {}", o.warm_up_runs));
  if (o.compute != "sleep" && o.compute != "busy")
    throw InputError("compute", "must be sleep or busy, got '" + o.compute + "'");
  if (!(o.submit_jitter_us >= 0) || o.submit_jitter_us > 1e6)
    throw InputError("submit_jitter_us", fmt::format("must be in 0..1e6, got {}", o.submit_jitter_us));
  JobSession session(o.topology);
  const auto& sized = session.topology;
  Job& job = session.job;
  const int me = job.me, world = job.world;
  if (o.veto_rank < -1 || o.veto_rank >= world)
    throw InputError("veto_rank", fmt::format("must be a rank of the job, 0..{}, got {}", world - 1, o.veto_rank));
  const std::string& world_backend = job.world_backend;
  Groups& groups = session.groups;
  const auto dag = syndicate::load_workload_dag(o.workload, sized, o.iterations);
  auto problem = syndicate::make_problem(dag, sized, {});
  const bool measured = o.plan_file.empty() && (o.costs == "measured" || o.costs == "in-run");
  double calibration_s = 0;
  if (measured) {
    const auto t0 = std::chrono::steady_clock::now();
    calibrate(problem, me, world, groups, world_backend, 5);
    calibration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  syndicate::Scheduler scheduler(problem);
  syndicate::MethodResult planned;
  if (!o.plan_file.empty()) {
    const auto loaded = syndicate::read_plan_file(problem, o.plan_file);
    planned.plan = loaded.plan;
    planned.sched = loaded.sched;
    planned.schedule = scheduler.run(planned.plan, planned.sched, true);
  } else {
    syndicate::SearchOptions search;
    search.seed = o.seed;
    search.max_evaluations = o.evaluations;
    search.min_evaluations = std::min(search.min_evaluations, o.evaluations);
    search.time_budget_s = 1e9;  // evaluations bound the search: every rank finds the same plan
    planned = syndicate::run_method(parse_method(o.method), scheduler, problem, search);
  }
  auto active = activate(job, problem, planned);
  if (o.costs == "in-run") {
    // Warm-up runs of the plan, then each of its steps costs the median of what it took inside
    // them (every rank's times, gathered: all ranks retime alike), and the same plan is
    // scheduled again with those costs: the prediction and the executed order.
    Rng warm_jitter(o.seed * 1000003u + static_cast<std::uint64_t>(me) + 7777u);
    std::vector<std::vector<double>> took;  // per warm-up run, per step
    for (int w = 0; w < o.warm_up_runs; ++w) {
      const RunStats warm = run_once(job, problem, *active, {o.compute, o.submit_jitter_us}, warm_jitter, -1);
      took.push_back(step_times_in_run(*active, gather_timelines(job, *active, warm)));
    }
    std::vector<double> typical(took.front().size());  // each step's median over the warm-up runs
    for (std::size_t k = 0; k < typical.size(); ++k) {
      std::vector<double> v;
      for (const auto& t : took) v.push_back(t[k]);
      typical[k] = median(v);
    }
    retime_from_run(problem, *active, typical);
    planned.schedule = scheduler.run(planned.plan, planned.sched, true);
    active = activate(job, problem, planned);
  }

  const std::size_t ops = problem.comms.size();
  Rng jitter(o.seed * 1000003u + static_cast<std::uint64_t>(me));
  std::vector<double> times, final_times;  // every run; the runs of the last plan
  double submit_wait_ns = 0, order_wait_ns = 0;
  double compute_ns = 0, exposed_ns = 0, submit_ns = 0;  // the application thread's time, all runs
  std::string check = "passed";
  std::vector<int> issue_order;  // every run's, concatenated
  int switches = 0, aborts = 0, proposals = 0;
  std::vector<double> order_wait_fraction;  // per run, slowest rank
  std::vector<WorkloadPlanRow> plans;
  auto plan_entry = [&](const syndicate::MethodResult& r, int from_run) {
    plans.push_back({std::string(syndicate::to_string(r.method)), from_run, r.schedule.iteration_ns});
  };
  plan_entry(active->planned, 0);
  RunStats last;  // the last run's, for the timeline
  for (int run = 0; run < o.repeat; ++run) {
    const RunStats rs = run_once(job, problem, *active, {o.compute, o.submit_jitter_us}, jitter, run);
    last = rs;
    const auto& stats = rs.enforcer;
    const double elapsed = rs.elapsed_ns;
    times.push_back(elapsed);
    final_times.push_back(elapsed);
    submit_wait_ns += stats.submit_wait_ns;
    order_wait_ns += stats.order_wait_ns;
    compute_ns += rs.compute_ns;
    exposed_ns += rs.exposed_ns;
    submit_ns += rs.submit_ns;
    issue_order.insert(issue_order.end(), stats.issue_order.begin(), stats.issue_order.end());
    if (check == "passed") check = rs.check;
    if (run + 1 == o.repeat) break;
    // Replanning (Sec. 4.4): the enforcers' order waits, slowest rank, above 5 % of the run in
    // two consecutive runs, or a forced switch after --switch-after runs. Every rank sees the
    // same all-reduced numbers, so every rank takes part in the same two-phase commits.
    double fraction = stats.order_wait_ns / elapsed;
    all_reduce(world_backend, &fraction, &fraction, 1, DType::f64, ReduceOp::max);
    order_wait_fraction.push_back(fraction);
    const std::size_t k = order_wait_fraction.size();
    const bool replan = o.replan && k >= 2 && order_wait_fraction[k - 1] > 0.05 && order_wait_fraction[k - 2] > 0.05;
    const bool forced = o.switch_after > 0 && run + 1 == o.switch_after;
    if (!replan && !forced) continue;
    ++proposals;
    // Rank 0 is the central optimizer: it searches (a new seed per proposal) and proposes.
    std::string proposal;
    if (me == 0) {
      syndicate::SearchOptions search;
      search.seed = o.seed + static_cast<std::uint64_t>(proposals);
      search.max_evaluations = o.evaluations;
      search.min_evaluations = std::min(search.min_evaluations, o.evaluations);
      const auto m = forced ? parse_method(o.switch_method, "switch_method") : syndicate::Method::kSyndicate;
      proposal = syndicate::plan_to_json(problem, syndicate::run_method(m, scheduler, problem, search)).dump();
    }
    // Prepare is local (the plan loaded and scheduled); activating it may form process groups,
    // which needs every member, so it waits for the commit that every rank carries out.
    syndicate::MethodResult prepared;
    const auto outcome = two_phase_commit(
        world_backend, proposal,
        [&](const std::string& text) {
          if (me == o.veto_rank) return false;
          const auto loaded = syndicate::plan_from_json(problem, nlohmann::json::parse(text), "proposed plan");
          prepared.plan = loaded.plan;
          prepared.sched = loaded.sched;
          prepared.schedule = scheduler.run(prepared.plan, prepared.sched, true);
          for (auto m : syndicate::all_methods())
            if (nlohmann::json::parse(text).value("method", "") == syndicate::to_string(m)) prepared.method = m;
          return true;
        },
        [&] { active = activate(job, problem, std::move(prepared)); });
    if (outcome.committed) {
      ++switches;
      final_times.clear();
      plan_entry(active->planned, run + 1);
    } else {
      ++aborts;
    }
  }
  // The same motif order on every rank: each rank's issue order hashed and compared.
  Fnv1a h;
  for (int v : issue_order) h.word(static_cast<std::uint64_t>(v));
  const auto mine = static_cast<std::int64_t>(h.digest() >> 1);
  std::vector<std::int64_t> hashes(static_cast<std::size_t>(world));
  all_gather(world_backend, &mine, hashes.data(), 1, DType::i64);
  const bool same_order =
      std::all_of(hashes.begin(), hashes.end(), [&](std::int64_t x) { return x == hashes.front(); });
  // The last run beside the prediction (every rank's times, gathered).
  const auto timelines = gather_timelines(job, *active, last);
  if (me == 0 && !o.trace.empty()) write_text_file(o.trace, run_trace(problem, *active, timelines).dump() + "\n");
  std::vector<double> t_max = {median(final_times)};
  all_reduce(world_backend, t_max.data(), t_max.data(), 1, DType::f64, ReduceOp::max);
  int bad = check == "passed" ? 0 : 1;
  all_reduce(world_backend, &bad, &bad, 1, DType::i32, ReduceOp::sum);
  if (bad && check == "passed") check = fmt::format("failed on {} rank(s)", bad);

  WorkloadReport report;
  report.rank = me;
  report.ranks = world;
  report.workload = dag.name;
  report.topology = sized.name;
  report.method = std::string(syndicate::to_string(active->planned.method));
  report.plan_file = o.plan_file;
  report.iterations = dag.iterations;
  report.repeat = o.repeat;
  report.comm_ops = ops;
  report.steps = issue_order.size();
  report.check = check;
  report.same_order_on_every_rank = same_order;
  report.iteration_time_ns = t_max[0] / dag.iterations;
  report.predicted_iteration_time_ns = active->planned.schedule.iteration_ns;
  report.ratio = t_max[0] / dag.iterations / active->planned.schedule.iteration_ns;
  report.plans = std::move(plans);
  report.plan_switches = switches;
  report.plan_switch_aborts = aborts;
  report.runs_with_final_plan = final_times.size();
  double total = 0;
  for (double t : times) total += t;
  report.submit_wait_fraction = submit_wait_ns / total;
  report.order_wait_fraction = order_wait_ns / total;
  report.app_compute_ns = compute_ns / o.repeat / dag.iterations;
  report.app_exposed_comm_ns = exposed_ns / o.repeat / dag.iterations;
  report.app_submit_ns = submit_ns / o.repeat / dag.iterations;
  double planned_compute = 0;
  for (int n : active->compute_order) planned_compute += problem.compute_ns[static_cast<std::size_t>(n)];
  report.planned_compute_ns = planned_compute / dag.iterations;
  report.compute = o.compute;
  report.costs = o.plan_file.empty() ? o.costs : o.costs == "in-run" ? "plan file, retimed in-run" : "plan file";
  report.calibration_s = calibration_s;
  report.submit_jitter_us = o.submit_jitter_us;
  report.last_run = compare_to_prediction(problem, *active, timelines);
  return report;
}

nlohmann::json to_json(const WorkloadReport& r) {
  nlohmann::json j;
  j["rank"] = r.rank;
  j["ranks"] = r.ranks;
  j["workload"] = r.workload;
  j["topology"] = r.topology;
  j["method"] = r.method;
  j["plan_file"] = r.plan_file;
  j["iterations"] = r.iterations;
  j["repeat"] = r.repeat;
  j["comm_ops"] = r.comm_ops;
  j["steps"] = r.steps;
  j["check"] = r.check;
  j["same_order_on_every_rank"] = r.same_order_on_every_rank;
  j["iteration_time_ns"] = r.iteration_time_ns;
  j["predicted_iteration_time_ns"] = r.predicted_iteration_time_ns;
  j["ratio"] = r.ratio;
  j["plans"] = nlohmann::json::array();
  for (const auto& p : r.plans)
    j["plans"].push_back({{"method", p.method},
                          {"from_run", p.from_run},
                          {"predicted_iteration_time_ns", p.predicted_iteration_time_ns}});
  j["plan_switches"] = r.plan_switches;
  j["plan_switch_aborts"] = r.plan_switch_aborts;
  j["runs_with_final_plan"] = r.runs_with_final_plan;
  j["submit_wait_fraction"] = r.submit_wait_fraction;
  j["order_wait_fraction"] = r.order_wait_fraction;
  j["app_compute_ns"] = r.app_compute_ns;
  j["app_exposed_comm_ns"] = r.app_exposed_comm_ns;
  j["app_submit_ns"] = r.app_submit_ns;
  j["planned_compute_ns"] = r.planned_compute_ns;
  j["compute"] = r.compute;
  j["costs"] = r.costs;
  j["calibration_s"] = r.calibration_s;
  j["submit_jitter_us"] = r.submit_jitter_us;
  j["last_run"] = to_json(r.last_run);
  return j;
}

std::string format_workload_report(const WorkloadReport& r) {
  return fmt::format(
      "{} on {} ({} ranks), plan by {}: {} comm-ops, {} steps per run, {} iterations x {} runs\n"
      "  iteration time  measured {:.3f} ms   predicted {:.3f} ms   ratio {:.3f}\n"
      "  check {}   same motif order on every rank: {}   enforcer waiting for submissions: {:.1f}%\n",
      r.workload, r.topology, r.ranks, r.method, r.comm_ops, r.steps, r.iterations, r.repeat, r.iteration_time_ns / 1e6,
      r.predicted_iteration_time_ns / 1e6, r.ratio, r.check, r.same_order_on_every_rank ? "yes" : "NO",
      100 * r.submit_wait_fraction);
}

}  // namespace chorus::eval
