#pragma once
// `chorus run workload`: a training DAG executed for real on this job's ranks through
// SYNDICATE's enforcer (rt/enforcer): the plan (a plan file, or the joint optimizer run on every
// rank with the same seed) turned into each rank's motif steps, compute emulated by timed work,
// every comm-op a real operation whose result is checked, the measured iteration time beside the
// optimizer's prediction for the same plan, and the motif order compared across ranks.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/real/run_timeline.h"

namespace chorus::eval {

struct WorkloadRunOptions {
  std::string workload = "moe-tiny";
  std::string topology = "host";     // every channel must name a runtime backend (shm, gloo, mpi)
  std::string plan_file;             // empty: plan here (syndicate, seeded: the same on every rank)
  std::string method = "syndicate";  // without --plan: syndicate | greedy | s-sched | s-exec | bs+ | fifo
  int iterations = 2;                // unrolled into the DAG (the plan's)
  int repeat = 3;                    // runs of the unrolled DAG; the median is reported
  std::uint64_t seed = 1;
  long evaluations = 20000;
  // measured: every step timed on the ranks first; in-run: measured, then warm-up runs of the
  // plan retime its steps by the median of what they took inside them; model: the topology's
  std::string costs = "measured";
  int warm_up_runs = 5;           // in-run: warm-up runs (1 was too noisy for many small steps)
  std::string compute = "sleep";  // sleep | busy: how compute nodes are emulated
  double submit_jitter_us = 0;    // random delay before each submission (seeded per rank)
  bool replan = false;            // replan when the enforcers wait > 5 % of a run out of order, twice in a row
  int switch_after = 0;           // > 0: propose a new plan (switch_method) after this many runs
  std::string switch_method = "syndicate";
  int veto_rank = -1;  // this rank votes no in the two-phase commit (tests the abort)
  std::string trace;   // Chrome trace of the last run beside the prediction (rank 0 writes it)
};

// A plan that ran: the first, and each one a two-phase commit switched to.
struct WorkloadPlanRow {
  std::string method;
  int from_run = 0;  // the run it started with
  double predicted_iteration_time_ns = 0;
};

struct WorkloadReport {
  int rank = 0, ranks = 0;
  std::string workload, topology;
  std::string method;     // of the plan running at the end
  std::string plan_file;  // empty: planned here
  int iterations = 0, repeat = 0;
  std::size_t comm_ops = 0;
  std::size_t steps = 0;  // this rank's steps issued, every run
  std::string check;      // "passed", or what failed
  bool same_order_on_every_rank = false;
  double iteration_time_ns = 0;  // median run of the final plan, slowest rank, per iteration
  double predicted_iteration_time_ns = 0, ratio = 0;
  std::vector<WorkloadPlanRow> plans;
  int plan_switches = 0, plan_switch_aborts = 0;
  std::size_t runs_with_final_plan = 0;
  double submit_wait_fraction = 0, order_wait_fraction = 0;  // the enforcer's waits over every run's time
  // Where this rank's application thread spent an iteration: compute, waiting for
  // communication, submitting; and the compute the plan expected.
  double app_compute_ns = 0, app_exposed_comm_ns = 0, app_submit_ns = 0;
  double planned_compute_ns = 0;
  std::string compute;  // sleep | busy
  std::string costs;    // measured | in-run | model | plan file[, retimed in-run]
  double calibration_s = 0;
  double submit_jitter_us = 0;
  TimelineComparison last_run;  // the last run beside the prediction
};

// Collective over the job; initialises and finalises the runtime. The report on every rank.
WorkloadReport run_workload_on_ranks(const WorkloadRunOptions& options);

// What `chorus run workload --json` prints: one object with a key per WorkloadReport field
// ("plans": one object per WorkloadPlanRow, "last_run": to_json(TimelineComparison)).
nlohmann::json to_json(const WorkloadReport& report);

// The report as a few lines.
std::string format_workload_report(const WorkloadReport& report);

}  // namespace chorus::eval
