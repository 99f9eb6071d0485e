// chorus reproduce: the simulated studies of src/eval, and the one table of every study
// (reproduce_studies.h).
#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <thread>
#include <unistd.h>

#include "apps/chorus/commands.h"
#include "apps/chorus/output_checks.h"
#include "apps/chorus/reproduce_studies.h"
#include "core/error.h"
#include "core/memory_budget.h"
#include "core/units.h"
#include "eval/themis_microbench.h"
#include "eval/themis_sensitivity.h"
#include "eval/themis_workloads.h"
#include "eval/shared_fabric_study.h"
#include "eval/themis_degraded.h"
#include "eval/syndicate_study.h"
#include "eval/topoopt_costs.h"
#include "eval/topoopt_heatmaps.h"
#include "eval/topoopt_iterations.h"
#include "sim/flow/flow_model.h"
#include "sim/run_collective.h"
#include "sim/jobs/time_shift.h"

namespace chorus::cli {
namespace {

struct ThemisArgs {
  std::string out = "results/themis";
  int chunks = 64;
  int max_chunks_per_dim = 0;
  int jobs = 0;
  bool quiet = false;
};

// -j: the simulations at once (0: the hardware's cores); the rows do not depend on it.
int workers_of(int jobs) {
  if (jobs < 0) throw InputError("--jobs", fmt::format("must be >= 1, got {}", jobs));
  return jobs == 0 ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) : jobs;
}

constexpr const char* kJobsHelp = "Simulations at once (default: the hardware's cores; the rows do not depend on it)";

eval::Progress make_progress(bool quiet, const char* what) {
  const bool tty = isatty(STDERR_FILENO) != 0;
  auto last_percent = std::make_shared<int>(-1);
  return [=](int done, int total, const std::string& label) {
    if (quiet) return;
    const int percent = total ? 100 * done / total : 100;
    if (tty) {
      fmt::print(stderr, "\r[{:>3}/{}] {:>3}% {:<60}", done, total, percent, label);
      if (done == total) fmt::print(stderr, "\n");
    } else if (percent / 10 != *last_percent / 10 || done == total) {
      fmt::print(stderr, "progress: {}/{} {} ({}%): {}\n", done, total, what, percent, label);
    }
    *last_percent = percent;
  };
}

struct WorkloadsArgs {
  std::string out = "results/themis-workloads";
  int iterations = 3;
  int chunks = 64;
  bool quiet = false;
  bool sensitivity = false;
  int jobs = 0;
  std::string grid = "quick";
  std::string astra_workload = eval::SensitivityConfig::quick().astra_file;
};

void run_reproduce_sensitivity(const WorkloadsArgs& a) {
  if (a.grid != "quick" && a.grid != "full") throw InputError("--grid", fmt::format("quick or full, got '{}'", a.grid));
  auto config = a.grid == "full" ? eval::SensitivityConfig::full() : eval::SensitivityConfig::quick();
  config.iterations = a.iterations;
  config.chunks = a.chunks;
  config.astra_file = a.astra_workload;
  config.workers = workers_of(a.jobs);
  const auto study = eval::run_themis_sensitivity(config, make_progress(a.quiet, "sensitivity runs"));
  fmt::print("{}", eval::format_sensitivity_tables(study));
  const auto files = eval::write_sensitivity_outputs(study, a.out);
  fmt::print("\n{} simulations in {:.3f} s; wrote:\n", 2 * study.rows.size(), study.wall_s);
  for (const auto& f : files) fmt::print("  {}\n", f);
}

void run_reproduce_workloads(const WorkloadsArgs& a) {
  auto config = eval::WorkloadStudyConfig::paper_defaults();
  if (a.iterations < 1 || a.iterations > 100)
    throw InputError("--iterations", fmt::format("must be in 1..100, got {}", a.iterations));
  require_range(a.chunks, 1, sim::kMaxChunksOfMany, "--chunks");
  if (a.sensitivity) return run_reproduce_sensitivity(a);
  config.iterations = a.iterations;
  config.chunks = a.chunks;
  config.workers = workers_of(a.jobs);
  const auto start = std::chrono::steady_clock::now();
  const auto study = eval::run_themis_workloads(config, make_progress(a.quiet, "workload simulations"));
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("{}", eval::format_workload_tables(study));
  const auto files = eval::write_workload_outputs(study, a.out);
  fmt::print("\n{} simulations in {:.3f} s; wrote:\n", study.rows.size(), secs);
  for (const auto& f : files) fmt::print("  {}\n", f);
}

void run_reproduce_themis(const ThemisArgs& a) {
  auto config = eval::MicrobenchConfig::paper_defaults();
  require_range(a.chunks, 1, sim::kMaxChunksOfMany, "--chunks");
  config.chunks = a.chunks;
  if (a.max_chunks_per_dim < 0) throw InputError("--max-chunks-per-dim", "must be >= 0 (0 = no limit)");
  config.max_chunks_per_dim = a.max_chunks_per_dim;
  config.workers = workers_of(a.jobs);
  const bool tty = isatty(STDERR_FILENO) != 0;
  int last_percent = -1;
  const auto start = std::chrono::steady_clock::now();
  eval::Progress progress = [&](int done, int total, const std::string& label) {
    if (a.quiet) return;
    const int percent = total ? 100 * done / total : 100;
    if (tty) {
      fmt::print(stderr, "\r[{:>3}/{}] {:>3}% {:<60}", done, total, percent, label);
      if (done == total) fmt::print(stderr, "\n");
    } else if (percent / 10 != last_percent / 10 || done == total) {
      fmt::print(stderr, "progress: {}/{} simulations ({}%): {}\n", done, total, percent, label);
    }
    last_percent = percent;
  };
  const auto report = eval::run_themis_microbench(config, progress);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("{}", eval::format_microbench_tables(report));
  const auto files = eval::write_microbench_outputs(report, a.out);
  fmt::print("\n{} simulations in {:.3f} s; wrote:\n", report.rows.size() + report.activity.size(), secs);
  for (const auto& f : files) fmt::print("  {}\n", f);
}

void add_themis(CLI::App& cmd) {
  auto args = std::make_shared<ThemisArgs>();
  cmd.add_option("-o,--out", args->out, "Output directory")->capture_default_str()->check(kWritableDir);
  cmd.add_option("-c,--chunks", args->chunks, "Chunks per collective for the size study")->capture_default_str();
  cmd.add_option("--max-chunks-per-dim", args->max_chunks_per_dim,
                 "At most this many chunks on a dimension at once; 0 = no limit (fixed delays overlap)")
      ->capture_default_str();
  cmd.add_flag("-q,--quiet", args->quiet, "No progress indicator");
  cmd.add_option("-j,--jobs", args->jobs, kJobsHelp);
  cmd.callback([args] { run_reproduce_themis(*args); });
}

void add_themis_workloads(CLI::App& cmd) {
  auto wargs = std::make_shared<WorkloadsArgs>();
  cmd.add_option("-o,--out", wargs->out, "Output directory")->capture_default_str()->check(kWritableDir);
  cmd.add_option("-i,--iterations", wargs->iterations, "Training iterations per run")->capture_default_str();
  cmd.add_option("-c,--chunks", wargs->chunks, "Chunks per collective")->capture_default_str();
  cmd.add_flag("-q,--quiet", wargs->quiet, "No progress indicator");
  cmd.add_option("-j,--jobs", wargs->jobs, kJobsHelp);
  auto* sens =
      cmd.add_flag("--sensitivity", wargs->sensitivity,
                   "Instead of Fig. 12: Themis-SCF's speedup for ResNet-152, GNMT and DLRM against per-NPU batch and "
                   "compute rate, and for ASTRA-sim 1.0's ResNet-50 against compute rate (where the paper's speedups "
                   "appear); sensitivity*.csv, fig12_sensitivity.svg");
  cmd.add_option("--grid", wargs->grid,
                 "--sensitivity: quick (octaves; rates 1/4..16) or full (half octaves; 1/16..64)")
      ->capture_default_str()
      ->needs(sens);
  cmd.add_option("--astra-workload", wargs->astra_workload,
                 "--sensitivity: ASTRA-sim text workload swept over the compute rate (\"\": none)")
      ->capture_default_str()
      ->needs(sens);
  cmd.callback([wargs] { run_reproduce_workloads(*wargs); });
}

void add_themis_degraded(CLI::App& cmd) {
  struct DegradedArgs {
    std::string out = "results/themis-degraded";
    std::string size = "1GB";
    int chunks = 64;
    std::vector<double> fractions = {0.5, 0.25};
    int jobs = 0;
    bool quiet = false;
  };
  auto dargs = std::make_shared<DegradedArgs>();
  cmd.add_option("-o,--out", dargs->out, "Output directory")->capture_default_str()->check(kWritableDir);
  cmd.add_option("-s,--size", dargs->size, "All-reduce size")->capture_default_str();
  cmd.add_option("-c,--chunks", dargs->chunks, "Chunks per collective")->capture_default_str();
  cmd.add_option("--fractions", dargs->fractions, "Fractions of a dimension's bandwidth, each in (0, 1]")
      ->capture_default_str();
  cmd.add_flag("-q,--quiet", dargs->quiet, "No progress indicator");
  cmd.add_option("-j,--jobs", dargs->jobs, kJobsHelp);
  cmd.callback([dargs] {
    eval::DegradedConfig c;
    c.size_bytes = static_cast<double>(parse_bytes(dargs->size, "--size"));
    if (!(c.size_bytes > 0)) throw InputError("--size", "must be positive");
    require_range(dargs->chunks, 1, sim::kMaxChunksOfMany, "--chunks");
    c.chunks = dargs->chunks;
    if (dargs->fractions.empty()) throw InputError("--fractions", "needs at least one fraction");
    for (double f : dargs->fractions)
      if (!(f > 0 && f <= 1)) throw InputError("--fractions", fmt::format("{} is not in (0, 1]", f));
    c.fractions = dargs->fractions;
    c.workers = workers_of(dargs->jobs);
    const auto study = eval::run_themis_degraded(c, make_progress(dargs->quiet, "degraded dimensions"));
    fmt::print("{}", eval::format_degraded_table(study));
    fmt::print("wrote:\n");
    for (const auto& f : eval::write_degraded_outputs(study, dargs->out)) fmt::print("  {}\n", f);
  });
}

void add_shared_fabric(CLI::App& cmd) {
  struct SharedFabricArgs {
    std::string out = "results/shared-fabric";
    int iterations = 3;
    int shift_steps = 8;
    int jobs = 0;
    bool quiet = false;
  };
  auto fargs = std::make_shared<SharedFabricArgs>();
  cmd.add_option("-o,--out", fargs->out, "Output directory")->capture_default_str()->check(kWritableDir);
  cmd.add_option("-i,--iterations", fargs->iterations, "Training iterations per job")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  cmd.add_option("--shift-steps", fargs->shift_steps, "Shifts tried per iteration")
      ->capture_default_str()
      ->check(CLI::Range(1, sim::jobs::kMaxShiftSteps));
  cmd.add_flag("-q,--quiet", fargs->quiet, "No progress indicator");
  cmd.add_option("-j,--jobs", fargs->jobs, kJobsHelp);
  cmd.callback([fargs] {
    const auto study = eval::run_shared_fabric_study(fargs->iterations, fargs->shift_steps,
                                                     make_progress(fargs->quiet, "job mixes"), workers_of(fargs->jobs));
    fmt::print("{}", eval::format_shared_fabric_table(study));
    fmt::print("wrote:\n");
    for (const auto& f : eval::write_shared_fabric_outputs(study, fargs->out)) fmt::print("  {}\n", f);
  });
}

void add_topoopt(CLI::App& cmd) {
  struct TopoOptArgs {
    std::string out = "results/topoopt";
    bool costs_only = false;
    eval::IterationStudyOptions it;
    bool quiet = false;
  };
  auto targs = std::make_shared<TopoOptArgs>();
  targs->it.workers = 0;  // the hardware's cores, unless -j says
  cmd.add_option("-o,--out", targs->out, "Output directory")->capture_default_str()->check(kWritableDir);
  cmd.add_flag("--costs-only", targs->costs_only, "Only Fig. 11 (no simulation)");
  cmd.add_option("--servers", targs->it.servers, "Figs. 12-13: servers in the cluster")->capture_default_str();
  cmd.add_option("--degrees", targs->it.degrees, "Figs. 12-13: server degrees d (Fig. 12: 4, Fig. 13: 8)")
      ->delimiter(',')
      ->capture_default_str();
  cmd.add_option("--bandwidths", targs->it.bandwidths, "Figs. 12-13: link bandwidths B, Gb/s (Table 3 speeds)")
      ->delimiter(',')
      ->capture_default_str();
  cmd.add_option("--models", targs->it.models, "Figs. 12-13: models")->delimiter(',')->capture_default_str();
  cmd.add_option("--fabrics", targs->it.fabrics,
                 "Figs. 12-13: fabrics (default: ideal-fat-tree, cost-equivalent-fat-tree, "
                 "oversub-fat-tree, expander, sip-ml, topoopt-oneshot, topoopt-reconfig)")
      ->delimiter(',');
  cmd.add_option("--iterations", targs->it.iterations, "Figs. 12-13: training iterations per run")
      ->capture_default_str();
  cmd.add_option("--seed", targs->it.seed, "The expander's seed")->capture_default_str();
  cmd.add_option(
         "--reconfig-latencies", targs->it.reconfig_latencies_us,
         "Fig. 15: TopoOpt-reconfig's OCS reconfiguration latencies, us (BERT and DLRM, the first degree, 100 Gb/s)")
      ->delimiter(',')
      ->capture_default_str();
  cmd.add_flag(
      "--no-fig15", [targs](std::int64_t) { targs->it.reconfig_latencies_us.clear(); }, "Skip Fig. 15");
  cmd.add_flag(
      "--periodic-replan", [targs](std::int64_t) { targs->it.reconfig_on_demand = false; },
      "Circuit fabrics re-plan only every 50 ms (Appendix D), not also when flows wait while a circuit idles");
  cmd.add_option("--batch-tolerance", targs->it.batch_tolerance,
                 "Flow model: finish flows within this fraction of their duration together (0: exact)")
      ->capture_default_str();
  cmd.add_flag("-q,--quiet", targs->quiet, "No progress lines");
  cmd.add_option(
      "-j,--jobs", targs->it.workers,
      "Figs. 12-13 and 15: simulations at once (default: the hardware's cores; the rows do not depend on it)");
  cmd.callback([targs] {
    auto& a = *targs;
    if (a.it.workers < 0) throw InputError("--jobs", fmt::format("must be >= 1, got {}", a.it.workers));
    if (a.it.workers == 0) a.it.workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (a.it.servers < 2 || a.it.servers > 4096)
      throw InputError("--servers", fmt::format("must be in 2..4096, got {}", a.it.servers));
    sim::flow::check_batch_tolerance(a.it.batch_tolerance);
    if (a.it.iterations < 1 || a.it.iterations > 100)
      throw InputError("--iterations", fmt::format("must be in 1..100, got {}", a.it.iterations));
    for (int d : a.it.degrees)
      if (d < 1 || d > 64) throw InputError("--degrees", fmt::format("must be in 1..64, got {}", d));
    const auto study = eval::run_cost_study();
    fmt::print("{}", eval::format_cost_table(study));
    auto written = eval::write_cost_outputs(study, a.out);
    const auto maps = eval::run_heatmaps();
    fmt::print(
        "\nFigs. 4 and 9: the DLRM example's traffic (16 servers), largest server-to-server cell, GB per iteration\n");
    for (const auto& h : maps) {
      double top = 0;
      for (const auto& row : h.bytes)
        for (double b : row) top = std::max(top, b);
      fmt::print("  {:<5} {:<16} {:8.3f}\n", h.figure, h.label, top / 1e9);
    }
    for (auto& f : eval::write_heatmap_outputs(maps, a.out)) written.push_back(std::move(f));
    if (!a.costs_only) {
      if (!a.quiet)
        a.it.progress = [](const eval::IterationRow& r, int done, int total, double left) {
          // The time left, from the runs' own times per model, fabric, degree and bandwidth.
          fmt::print(stderr,
                     "[{}/{}] {} on {}{} (d = {}, B = {} Gb/s): {:.3f} ms per iteration, {} flows, {:.2f} s; about "
                     "{:.0f} s left\n",
                     done, total, r.model, r.fabric,
                     r.fabric == "topoopt-reconfig" ? fmt::format(" at {} us", r.reconfig_latency_us) : "", r.degree,
                     r.bandwidth_gbps, r.iteration_ns / 1e6, r.flows, r.wall_s, left);
        };
      const auto it = eval::run_iteration_study(a.it);
      fmt::print("\n{}", eval::format_iteration_table(it));
      for (auto& f : eval::write_iteration_outputs(it, a.out)) written.push_back(std::move(f));
    }
    fmt::print("wrote:\n");
    for (const auto& f : written) fmt::print("  {}\n", f);
  });
}

void add_syndicate(CLI::App& cmd) {
  struct SyndicateArgs {
    std::string out = "results/syndicate";
    std::vector<std::string> workloads;
    std::uint64_t seed = 1;
    long evaluations = 20000;
    int jobs = 0;
    bool quiet = false;
  };
  auto sargs = std::make_shared<SyndicateArgs>();
  cmd.add_option("-o,--out", sargs->out, "Output directory")->capture_default_str()->check(kWritableDir);
  cmd.add_option("--workloads", sargs->workloads,
                 "Instead of the paper's: WORKLOAD[:TOPOLOGY] ... (topology default syndicate-testbed)");
  cmd.add_option("--seed", sargs->seed, "Seed of the searches")->capture_default_str();
  cmd.add_option("--evaluations", sargs->evaluations, "Plans costed per search")->capture_default_str();
  cmd.add_flag("-q,--quiet", sargs->quiet, "No progress lines");
  cmd.add_option("-j,--jobs", sargs->jobs,
                 "Cases at once (default: the hardware's cores; the rows but the searches' wall times do not depend "
                 "on it)");
  cmd.callback([sargs] {
    auto o = eval::default_syndicate_cases();
    if (!sargs->workloads.empty()) {
      o.cases.clear();
      for (const auto& w : sargs->workloads) {
        const auto colon = w.find(':');
        o.cases.push_back(
            {w.substr(0, colon), colon == std::string::npos ? "syndicate-testbed" : w.substr(colon + 1), 0});
      }
    }
    if (sargs->evaluations < 1) throw InputError("--evaluations", "must be >= 1");
    o.seed = sargs->seed;
    o.evaluations = sargs->evaluations;
    o.progress = !sargs->quiet;
    o.workers = workers_of(sargs->jobs);
    const auto study = eval::run_syndicate_study(o);
    fmt::print("{}", eval::format_syndicate_table(study));
    fmt::print("wrote:\n");
    for (const auto& f : eval::write_syndicate_outputs(study, sargs->out)) fmt::print("  {}\n", f);
  });
}

// Every study of `chorus reproduce`, in the order `reproduce --help` lists them: the one table
// the subcommands are made from, so help, did-you-mean on an unknown study and dispatch all read it.
constexpr ReproduceStudy kReproduceStudies[] = {
    {"themis",
     "Themis Sec. 6.1 microbenchmarks: all-reduce 100 MB..1 GB x Table 2 topologies x schedulers, "
     "chunk sweep (Figs. 8-11); tables, CSV and SVG plots",
     add_themis},
    {"themis-workloads",
     "Themis Sec. 6.2 real workloads: ResNet-152, GNMT, DLRM, Transformer-1T x Table 2 "
     "topologies x schedulers (Fig. 12); tables, CSV and SVG plots",
     add_themis_workloads},
    {"themis-degraded",
     "Themis on stale bandwidths: each dimension of each Table 2 "
     "topology at a fraction of its bandwidth; the baseline, Themis planned on the "
     "nominal bandwidths and Themis re-planned; table, CSV, JSON",
     add_themis_degraded},
    {"shared-fabric",
     "Two jobs sharing a fabric (docs/shared-fabric.md): placement policies, and "
     "start shifts searched by simulation (CASSINI's idea) against no shift; table, CSV, JSON",
     add_shared_fabric},
    {"topoopt",
     "TopoOpt Sec. 5: fabric costs (Fig. 11) and the training iteration time of CANDLE, BERT "
     "and DLRM on every fabric over link bandwidths 10-200 Gb/s (Figs. 12-13, flow-level "
     "model), the DLRM example's traffic heatmaps (Figs. 4, 9); tables, CSV, SVG figures",
     add_topoopt},
    {"syndicate",
     "SYNDICATE Sec. 6, simulated: the Fig. 6 example, DLRM-like models A1-A4 (Table 2) on the "
     "Table 1 testbed under SYNDICATE and the baselines; table, syndicate.csv, figures",
     add_syndicate},
#ifdef CHORUS_HAVE_RT
    {"syndicate-real",
     "SYNDICATE's motif microbenchmarks (Figs. 16-18) on real ranks beside optSched's prediction; table, motifs.csv "
     "and SVG plots",
     add_syndicate_real},
    {"themis-real",
     "Baseline vs Themis+FIFO vs Themis+SCF executed on real ranks (emulated networks scaled to this host) beside "
     "the simulator's prediction; table, CSV and SVG plots",
     add_themis_real},
    {"capture-validation",
     "Torch programs (examples/torch's DDP MLP, MoE, DLRM and a validation program) captured and simulated on "
     "this host's model against their own step times; table, CSV, JSON and SVG (docs/capture.md)",
     add_capture_validation},
#endif
};

}  // namespace

std::span<const ReproduceStudy> reproduce_studies() { return kReproduceStudies; }

void register_reproduce_commands(CLI::App& app) {
  auto* rep = app.add_subcommand("reproduce", "Reproduce a paper's evaluation with the chorus models");
  rep->require_subcommand(1);
  for (const ReproduceStudy& s : reproduce_studies()) s.add(*rep->add_subcommand(s.name, s.description));
}

}  // namespace chorus::cli
