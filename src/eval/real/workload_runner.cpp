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
#include "rt/runtime_instance.h"
#include "syndicate/joint_optimizer.h"
#include "syndicate/plan_json.h"
#include "syndicate/workloads.h"

namespace chorus::eval {

using rt::DType;
using rt::ReduceOp;

namespace {

void check_options(const WorkloadRunOptions& o) {
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
}

// The workload's DAG on the job's topology (after the one check that needs the job's size).
workload::Dag load_dag(const WorkloadRunOptions& o, const JobSession& session) {
  const int world = session.job.world;
  if (o.veto_rank < -1 || o.veto_rank >= world)
    throw InputError("veto_rank", fmt::format("must be a rank of the job, 0..{}, got {}", world - 1, o.veto_rank));
  return syndicate::load_workload_dag(o.workload, session.topology, o.iterations);
}

syndicate::SearchOptions search_options(const WorkloadRunOptions& o, std::uint64_t seed) {
  syndicate::SearchOptions search;
  search.seed = seed;
  search.max_evaluations = o.evaluations;
  search.min_evaluations = std::min(search.min_evaluations, o.evaluations);
  return search;
}

// What this rank's runs add up to.
struct Tally {
  std::vector<double> times, final_times;  // every run; the runs of the last plan
  double submit_wait_ns = 0, order_wait_ns = 0;
  double compute_ns = 0, exposed_ns = 0, submit_ns = 0;  // the application thread's time, all runs
  std::string check = "passed";
  std::vector<int> issue_order;  // every run's, concatenated
  int switches = 0, aborts = 0, proposals = 0;
  std::vector<double> order_wait_fraction;  // per run, slowest rank
  std::vector<WorkloadPlanRow> plans;
  RunStats last;  // the last run's, for the timeline

  void add(const RunStats& rs) {
    last = rs;
    times.push_back(rs.elapsed_ns);
    final_times.push_back(rs.elapsed_ns);
    submit_wait_ns += rs.enforcer.submit_wait_ns;
    order_wait_ns += rs.enforcer.order_wait_ns;
    compute_ns += rs.compute_ns;
    exposed_ns += rs.exposed_ns;
    submit_ns += rs.submit_ns;
    issue_order.insert(issue_order.end(), rs.enforcer.issue_order.begin(), rs.enforcer.issue_order.end());
    if (check == "passed") check = rs.check;
  }
  void plan_started(const syndicate::MethodResult& r, int from_run) {
    plans.push_back({std::string(syndicate::to_string(r.method)), from_run, r.schedule.iteration_ns});
  }
};

// One `chorus run workload` on this rank: the job, the problem, its plan, the runs' tally.
class WorkloadRun {
 public:
  explicit WorkloadRun(const WorkloadRunOptions& o)
      : o_(o),
        session_(o.topology),
        job_(session_.job),
        dag_(load_dag(o, session_)),
        problem_(syndicate::make_problem(dag_, session_.topology, {})),
        calibration_s_(calibrate_if_measured()),
        scheduler_(problem_) {}

  WorkloadReport run() {
    active_ = activate(job_, problem_, first_plan());
    if (o_.costs == "in-run") retime_in_run();
    tally_.plan_started(active_->planned, 0);
    Rng jitter(o_.seed * 1000003u + static_cast<std::uint64_t>(job_.me));
    for (int run = 0; run < o_.repeat; ++run) {
      const RunStats rs = run_once(job_, problem_, *active_, {o_.compute, o_.submit_jitter_us}, jitter, run);
      tally_.add(rs);
      if (run + 1 == o_.repeat) break;
      replan_if_asked(run, rs);
    }
    return report();
  }

 private:
  double calibrate_if_measured() {
    if (!o_.plan_file.empty() || (o_.costs != "measured" && o_.costs != "in-run")) return 0;
    const auto t0 = std::chrono::steady_clock::now();
    calibrate(problem_, job_, 5);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // The plan file's plan, or the search's (bounded by evaluations: every rank finds the same).
  syndicate::MethodResult first_plan() {
    syndicate::MethodResult planned;
    if (!o_.plan_file.empty()) {
      const auto loaded = syndicate::read_plan_file(problem_, o_.plan_file);
      planned.plan = loaded.plan;
      planned.sched = loaded.sched;
      planned.schedule = scheduler_.run(planned.plan, planned.sched, true);
      return planned;
    }
    syndicate::SearchOptions search = search_options(o_, o_.seed);
    search.time_budget_s = 1e9;  // evaluations bound the search: every rank finds the same plan
    return syndicate::run_method(parse_method(o_.method), scheduler_, problem_, search);
  }

  // Warm-up runs of the plan, then each of its steps costs the median of what it took inside
  // them (every rank's times, gathered: all ranks retime alike), and the same plan is scheduled
  // again with those costs: the prediction and the executed order.
  void retime_in_run() {
    Rng warm_jitter(o_.seed * 1000003u + static_cast<std::uint64_t>(job_.me) + 7777u);
    std::vector<std::vector<double>> took;  // per warm-up run, per step
    for (int w = 0; w < o_.warm_up_runs; ++w) {
      const RunStats warm = run_once(job_, problem_, *active_, {o_.compute, o_.submit_jitter_us}, warm_jitter, -1);
      took.push_back(step_times_in_run(*active_, gather_timelines(job_, *active_, warm)));
    }
    std::vector<double> typical(took.front().size());  // each step's median over the warm-up runs
    for (std::size_t k = 0; k < typical.size(); ++k) {
      std::vector<double> v;
      for (const auto& t : took) v.push_back(t[k]);
      typical[k] = median(v);
    }
    retime_from_run(problem_, *active_, typical);
    syndicate::MethodResult planned = active_->planned;
    planned.schedule = scheduler_.run(planned.plan, planned.sched, true);
    active_ = activate(job_, problem_, std::move(planned));
  }

  // Replanning (Sec. 4.4): the enforcers' order waits, slowest rank, above 5 % of the run in
  // two consecutive runs, or a forced switch after switch_after runs. Every rank sees the same
  // all-reduced numbers, so every rank takes part in the same two-phase commits.
  void replan_if_asked(int run, const RunStats& rs) {
    double fraction = rs.enforcer.order_wait_ns / rs.elapsed_ns;
    job_.runtime->issue(job_.world_backend, rt::calls::all_reduce(&fraction, &fraction, 1, DType::f64, ReduceOp::max),
                        false);
    auto& waits = tally_.order_wait_fraction;
    waits.push_back(fraction);
    const std::size_t k = waits.size();
    const bool replan = o_.replan && k >= 2 && waits[k - 1] > 0.05 && waits[k - 2] > 0.05;
    const bool forced = o_.switch_after > 0 && run + 1 == o_.switch_after;
    if (replan || forced) propose(forced, run);
  }

  // Rank 0 is the central optimizer: it searches (a new seed per proposal) and proposes; every
  // rank votes in a two-phase commit.
  void propose(bool forced, int run) {
    ++tally_.proposals;
    std::string proposal;
    if (job_.me == 0) {
      const auto search = search_options(o_, o_.seed + static_cast<std::uint64_t>(tally_.proposals));
      const auto m = forced ? parse_method(o_.switch_method, "switch_method") : syndicate::Method::kSyndicate;
      proposal = syndicate::plan_to_json(problem_, syndicate::run_method(m, scheduler_, problem_, search)).dump();
    }
    // Prepare is local (the plan loaded and scheduled); activating it may form process groups,
    // which needs every member, so it waits for the commit that every rank carries out.
    syndicate::MethodResult prepared;
    const auto outcome = rt::two_phase_commit(
        *job_.runtime, job_.world_backend, proposal,
        [&](const std::string& text) {
          if (job_.me == o_.veto_rank) return false;
          const auto loaded = syndicate::plan_from_json(problem_, nlohmann::json::parse(text), "proposed plan");
          prepared.plan = loaded.plan;
          prepared.sched = loaded.sched;
          prepared.schedule = scheduler_.run(prepared.plan, prepared.sched, true);
          for (auto m : syndicate::all_methods())
            if (nlohmann::json::parse(text).value("method", "") == syndicate::to_string(m)) prepared.method = m;
          return true;
        },
        [&] { active_ = activate(job_, problem_, std::move(prepared)); });
    if (outcome.committed) {
      ++tally_.switches;
      tally_.final_times.clear();
      tally_.plan_started(active_->planned, run + 1);
    } else {
      ++tally_.aborts;
    }
  }

  WorkloadReport report();

  const WorkloadRunOptions& o_;
  JobSession session_;
  Job& job_;
  workload::Dag dag_;
  syndicate::Problem problem_;
  double calibration_s_ = 0;
  syndicate::Scheduler scheduler_;
  std::unique_ptr<Active> active_;
  Tally tally_;
};

// The same motif order on every rank, the last run beside the prediction, and the totals.
// Collective.
WorkloadReport WorkloadRun::report() {
  const Tally& t = tally_;
  const int world = job_.world;
  Fnv1a h;  // each rank's issue order hashed and compared
  for (int v : t.issue_order) h.word(static_cast<std::uint64_t>(v));
  const auto mine = static_cast<std::int64_t>(h.digest() >> 1);
  std::vector<std::int64_t> hashes(static_cast<std::size_t>(world));
  job_.runtime->issue(job_.world_backend, rt::calls::all_gather(&mine, hashes.data(), 1, DType::i64), false);
  const bool same_order =
      std::all_of(hashes.begin(), hashes.end(), [&](std::int64_t x) { return x == hashes.front(); });
  // The last run beside the prediction (every rank's times, gathered).
  const auto timelines = gather_timelines(job_, *active_, t.last);
  if (job_.me == 0 && !o_.trace.empty())
    write_text_file(o_.trace, run_trace(problem_, *active_, timelines).dump() + "\n");
  std::vector<double> t_max = {median(t.final_times)};
  job_.runtime->issue(job_.world_backend,
                      rt::calls::all_reduce(t_max.data(), t_max.data(), 1, DType::f64, ReduceOp::max), false);
  std::string check = t.check;
  int bad = check == "passed" ? 0 : 1;
  job_.runtime->issue(job_.world_backend, rt::calls::all_reduce(&bad, &bad, 1, DType::i32, ReduceOp::sum), false);
  if (bad && check == "passed") check = fmt::format("failed on {} rank(s)", bad);

  WorkloadReport report;
  report.rank = job_.me;
  report.ranks = world;
  report.workload = dag_.name;
  report.topology = session_.topology.name;
  report.method = std::string(syndicate::to_string(active_->planned.method));
  report.plan_file = o_.plan_file;
  report.iterations = dag_.iterations;
  report.repeat = o_.repeat;
  report.comm_ops = problem_.comms.size();
  report.steps = t.issue_order.size();
  report.check = check;
  report.same_order_on_every_rank = same_order;
  report.iteration_time_ns = t_max[0] / dag_.iterations;
  report.predicted_iteration_time_ns = active_->planned.schedule.iteration_ns;
  report.ratio = t_max[0] / dag_.iterations / active_->planned.schedule.iteration_ns;
  report.plans = t.plans;
  report.plan_switches = t.switches;
  report.plan_switch_aborts = t.aborts;
  report.runs_with_final_plan = t.final_times.size();
  double total = 0;
  for (double x : t.times) total += x;
  report.submit_wait_fraction = t.submit_wait_ns / total;
  report.order_wait_fraction = t.order_wait_ns / total;
  report.app_compute_ns = t.compute_ns / o_.repeat / dag_.iterations;
  report.app_exposed_comm_ns = t.exposed_ns / o_.repeat / dag_.iterations;
  report.app_submit_ns = t.submit_ns / o_.repeat / dag_.iterations;
  double planned_compute = 0;
  for (int n : active_->compute_order) planned_compute += problem_.compute_ns[static_cast<std::size_t>(n)];
  report.planned_compute_ns = planned_compute / dag_.iterations;
  report.compute = o_.compute;
  report.costs = o_.plan_file.empty() ? o_.costs : o_.costs == "in-run" ? "plan file, retimed in-run" : "plan file";
  report.calibration_s = calibration_s_;
  report.submit_jitter_us = o_.submit_jitter_us;
  report.last_run = compare_to_prediction(problem_, *active_, timelines);
  return report;
}

}  // namespace

WorkloadReport run_workload_on_ranks(const WorkloadRunOptions& o) {
  check_options(o);
  return WorkloadRun(o).run();
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
