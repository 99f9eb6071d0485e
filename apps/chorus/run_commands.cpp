// chorus run collective | chorus run schedule: a Themis schedule executed on the ranks of this
// job (under chorus launch or mpirun), measured beside the simulator's prediction.
#include <cstdio>
#include <iostream>
#include <memory>

#include "apps/chorus/commands.h"
#include "apps/chorus/output_checks.h"
#include "eval/real/schedule_runner.h"
#include "eval/real/motif_microbench.h"
#include "eval/real/workload_runner.h"

namespace chorus::cli {
namespace {

// `run collective` and `run schedule`: the library's options, and how to print the report.
struct ScheduleCommand {
  eval::ScheduleRunOptions options;
  bool json = false;  // one JSON object instead of a table
};

void add_common(CLI::App* c, ScheduleCommand& cmd) {
  auto& o = cmd.options;
  c->add_option("-t,--topology", o.topology,
                "Preset name (`chorus sim topologies`) or network YAML; its dimensions' sizes must multiply to the "
                "ranks (default: --grid 2xN/2, or N)");
  c->add_option("--grid", o.grid,
                "Instead of a topology: ranks as a grid, e.g. 2x4 (each dimension a 1 GB/s switch, 1 us latency)");
  c->add_flag("--emulate", o.emulate,
              "Pace every stage to the network model (bandwidth and step latency of each dimension)");
  c->add_option(
       "--dim-backends", o.dim_backends,
       "Backend of each dimension's groups (shm, gloo, mpi, auto), one or one per dimension; auto: the fastest for "
       "that "
       "dimension's operations by the tuning table (CHORUS_RT_TUNING, `chorus tune`), else the first available")
      ->capture_default_str();
  c->add_option("--iters", o.iters, "Measured iterations (the median is reported)")->capture_default_str();
  c->add_option("--warmup", o.warmup, "Iterations before measuring")->capture_default_str();
  c->add_option("--dtype", o.dtype, "Element type: f32, f64, f16, bf16, i32, i64, ...")->capture_default_str();
  c->add_option("--reduce", o.reduce, "sum, prod, min, max or avg")->capture_default_str();
  c->add_flag("--json", cmd.json, "Print one JSON object instead of a table");
  c->add_option("--trace", o.trace,
                "Chrome-trace JSON of the last measured iteration (rank 0), same layout as `chorus sim --trace`");
  c->add_option("--sim-trace", o.sim_trace, "Chrome-trace JSON of the simulator's prediction of the same schedule");
  c->footer(
      "Start under a launcher: chorus launch -n 4 -- chorus run collective --grid 2x2 ...  (or mpirun -n 4 ...).\n"
      "The report (rank 0) gives time_ns (median over iterations of the slowest rank), predicted_time_ns,\n"
      "ratio, check (passed, or the first wrong element) and per-dimension bytes_per_rank and busy_ns.");
}

void run(const ScheduleCommand& cmd) {
  const auto report = eval::run_schedule_on_ranks(cmd.options);
  if (report.rank == 0) {
    if (cmd.json)
      std::cout << eval::to_json(report).dump(2) << "\n";
    else
      std::cout << eval::format_schedule_report(report);
  }
  if (report.check != "passed") std::exit(1);
}

}  // namespace

void register_run_commands(CLI::App& app) {
  auto* run_cmd = app.add_subcommand(
      "run", "Execute Themis schedules and SYNDICATE plans on real ranks and check them against the simulator");
  run_cmd->require_subcommand(1);

  static eval::MotifBenchOptions mo;
  static bool mo_json = false;
  auto* mc = run_cmd->add_subcommand(
      "motifs", "SYNDICATE's motif microbenchmarks (Figs. 16-18) on real ranks beside optSched's prediction");
  mc->add_option("--sizes", mo.sizes, "Sizes per rank for Figs. 16 and 17 (comma-separated or repeated)")
      ->delimiter(',')
      ->capture_default_str();
  mc->add_option("--overlap-size", mo.overlap_size, "Size of each comm-op of Fig. 18")->capture_default_str();
  mc->add_option("--repeat", mo.repeat, "Measured runs per row (median), after one warm-up")->capture_default_str();
  mc->add_flag("--json", mo_json, "Print one JSON object (rank 0)");
  mc->footer("Start under a launcher: chorus launch -n 4 -- chorus run motifs");
  mc->callback([] {
    const auto report = eval::run_motif_microbench_on_ranks(mo);
    if (report.rank == 0)
      std::cout << (mo_json ? eval::motif_report_json(report).dump(2) + "\n" : eval::format_motif_microbench(report));
    for (const auto& row : report.rows)
      if (row.check != "passed") std::exit(1);
  });

  static eval::WorkloadRunOptions wo;
  static bool wo_json = false;
  auto* wl = run_cmd->add_subcommand("workload",
                                     "Run a training DAG for real through SYNDICATE's enforcer (docs/syndicate.md)");
  wl->add_option("--workload", wo.workload, "moe-tiny, syndicate-fig6-like zoo workloads, or a workload YAML file")
      ->capture_default_str();
  wl->add_option("--topology", wo.topology,
                 "host (channels shm, mpi, gloo) or a topology YAML whose channels name runtime backends")
      ->capture_default_str();
  wl->add_option("--plan", wo.plan_file, "plan JSON from `chorus plan --out` (default: plan here, seeded)");
  wl->add_option("--method", wo.method, "without --plan: syndicate | greedy | s-sched | s-exec | bs+ | fifo")
      ->capture_default_str();
  wl->add_option("--iterations", wo.iterations, "training iterations unrolled into the DAG")->capture_default_str();
  wl->add_option("--repeat", wo.repeat, "runs of the unrolled DAG (median reported)")->capture_default_str();
  wl->add_option("--seed", wo.seed, "seed of the plan search and of --submit-jitter-us")->capture_default_str();
  wl->add_option("--evaluations", wo.evaluations,
                 "plans costed by the search (bounded by count, not time: same plan on every rank)")
      ->capture_default_str();
  wl->add_option("--costs", wo.costs,
                 "measured (time every motif step on these ranks first, then plan) | in-run (measured, then "
                 "--warm-up-runs runs of the plan retime its steps by the median of what they took there) | model (the "
                 "topology's); a --plan keeps its own")
      ->capture_default_str();
  wl->add_option("--warm-up-runs", wo.warm_up_runs, "with --costs in-run: runs of the plan whose step times retime it")
      ->capture_default_str();
  wl->add_option("--compute", wo.compute, "sleep | busy: how compute nodes are emulated")->capture_default_str();
  wl->add_option("--submit-jitter-us", wo.submit_jitter_us, "random delay before each comm-op submission (per rank)")
      ->capture_default_str();
  wl->add_flag("--replan", wo.replan,
               "replan when the enforcers wait out of order > 5 % of a run in two runs in a row (2PC switch)");
  wl->add_option("--switch-after", wo.switch_after,
                 "propose a new plan by --switch-method after this many runs (two-phase commit)")
      ->capture_default_str();
  wl->add_option("--switch-method", wo.switch_method, "method of the proposed plan")->capture_default_str();
  wl->add_option("--veto-rank", wo.veto_rank, "this rank votes no in the two-phase commit (the old plan keeps running)")
      ->capture_default_str();
  wl->add_option(
      "--trace", wo.trace,
      "Chrome-trace JSON of the last run, every rank's steps and compute beside the prediction (rank 0 writes it)");
  wl->add_flag("--json", wo_json, "Print one JSON object (rank 0)");
  wl->footer("Start under a launcher: chorus launch -n 4 -- chorus run workload --workload moe-tiny");
  wl->callback([] {
    const auto report = eval::run_workload_on_ranks(wo);
    if (report.rank == 0)
      std::cout << (wo_json ? eval::to_json(report).dump(2) + "\n" : eval::format_workload_report(report));
    if (report.check != "passed" || !report.same_order_on_every_rank) std::exit(1);
  });

  auto co = std::make_shared<ScheduleCommand>();
  auto* coll = run_cmd->add_subcommand("collective", "Make a schedule for a network, then run it on this job's ranks");
  coll->add_option("--op", co->options.op, "allreduce | reducescatter | allgather | alltoall")->capture_default_str();
  coll->add_option("-s,--size", co->options.size, "Collective size per rank, e.g. 64MiB")->capture_default_str();
  coll->add_option("-c,--chunks", co->options.chunks, "Chunks")->capture_default_str();
  coll->add_option("--scheduler", co->options.scheduler, "baseline | themis-fifo | themis-scf (or themis)")
      ->capture_default_str();
  coll->add_option("--threshold-divisor", co->options.threshold_divisor,
                   "Themis threshold divisor (as in `chorus sim`)")
      ->capture_default_str();
  add_common(coll, *co);
  coll->callback([co] { run(*co); });

  auto so = std::make_shared<ScheduleCommand>();
  auto* sch =
      run_cmd->add_subcommand("schedule", "Run a saved schedule (JSON from `chorus sim collective --save-schedule`)");
  sch->add_option("schedule", so->options.schedule_file, "Schedule JSON file")->required();
  add_common(sch, *so);
  sch->callback([so] { run(*so); });
}

}  // namespace chorus::cli
