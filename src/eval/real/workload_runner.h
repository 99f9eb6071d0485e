#pragma once
// `chorus run workload`: a training DAG executed for real on this job's ranks through
// SYNDICATE's enforcer (rt/enforcer): the plan (a plan file, or the joint optimizer run on every
// rank with the same seed) turned into each rank's motif steps, compute emulated by timed work,
// every comm-op a real operation whose result is checked, the measured iteration time beside the
// optimizer's prediction for the same plan, and the motif order compared across ranks.
#include <nlohmann/json.hpp>
#include <string>

namespace chorus::rt {

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

// Collective over the job; initialises and finalises the runtime. The report on every rank.
nlohmann::json run_workload_on_ranks(const WorkloadRunOptions& options);
std::string format_workload_report(const nlohmann::json& report);

}  // namespace chorus::rt
