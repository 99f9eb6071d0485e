// chorus reproduce themis
#include <chrono>
#include <fmt/format.h>
#include <unistd.h>

#include "apps/chorus/commands.h"
#include "core/error.h"
#include "eval/themis_microbench.h"
#include "eval/themis_workloads.h"
#include "eval/syndicate_study.h"
#include "eval/topoopt_costs.h"

namespace chorus::cli {
namespace {

struct ThemisArgs {
  std::string out = "results/themis";
  int chunks = 64;
  int max_chunks_per_dim = 0;
  bool quiet = false;
};

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
      fmt::print(stderr, "progress: {}/{} {} ({}%)\n", done, total, what, percent);
    }
    *last_percent = percent;
  };
}

struct WorkloadsArgs {
  std::string out = "results/themis-workloads";
  int iterations = 3;
  int chunks = 64;
  bool quiet = false;
};

void run_reproduce_workloads(const WorkloadsArgs& a) {
  auto config = eval::WorkloadStudyConfig::paper_defaults();
  if (a.iterations < 1 || a.iterations > 100) throw InputError("--iterations", fmt::format("must be in 1..100, got {}", a.iterations));
  if (a.chunks < 1 || a.chunks > 100000) throw InputError("--chunks", fmt::format("must be in 1..100000, got {}", a.chunks));
  config.iterations = a.iterations;
  config.chunks = a.chunks;
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
  if (a.chunks < 1 || a.chunks > 100000) throw InputError("--chunks", fmt::format("must be in 1..100000, got {}", a.chunks));
  config.chunks = a.chunks;
  if (a.max_chunks_per_dim < 0) throw InputError("--max-chunks-per-dim", "must be >= 0 (0 = no limit)");
  config.max_chunks_per_dim = a.max_chunks_per_dim;
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
      fmt::print(stderr, "progress: {}/{} simulations ({}%)\n", done, total, percent);
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

}  // namespace

void register_reproduce_commands(CLI::App& app) {
  auto* rep = app.add_subcommand("reproduce", "Reproduce a paper's evaluation with the chorus models");
  rep->require_subcommand(1);
  auto args = std::make_shared<ThemisArgs>();
  auto* themis = rep->add_subcommand(
      "themis", "Themis Sec. 6.1 microbenchmarks: all-reduce 100 MB..1 GB x Table 2 topologies x schedulers, "
                "chunk sweep (Figs. 8-11); tables, CSV and SVG plots");
  themis->add_option("-o,--out", args->out, "Output directory")->capture_default_str();
  themis->add_option("-c,--chunks", args->chunks, "Chunks per collective for the size study")->capture_default_str();
  themis->add_option("--max-chunks-per-dim", args->max_chunks_per_dim,
                     "At most this many chunks on a dimension at once; 0 = no limit (fixed delays overlap)")
      ->capture_default_str();
  themis->add_flag("-q,--quiet", args->quiet, "No progress indicator");
  themis->callback([args] { run_reproduce_themis(*args); });

  auto wargs = std::make_shared<WorkloadsArgs>();
  auto* wl = rep->add_subcommand(
      "themis-workloads", "Themis Sec. 6.2 real workloads: ResNet-152, GNMT, DLRM, Transformer-1T x Table 2 "
                          "topologies x schedulers (Fig. 12); tables, CSV and SVG plots");
  wl->add_option("-o,--out", wargs->out, "Output directory")->capture_default_str();
  wl->add_option("-i,--iterations", wargs->iterations, "Training iterations per run")->capture_default_str();
  wl->add_option("-c,--chunks", wargs->chunks, "Chunks per collective")->capture_default_str();
  wl->add_flag("-q,--quiet", wargs->quiet, "No progress indicator");
  wl->callback([wargs] { run_reproduce_workloads(*wargs); });
  auto tout = std::make_shared<std::string>("results/topoopt");
  auto* topo = rep->add_subcommand("topoopt", "TopoOpt Sec. 5.2 so far: fabric costs (Fig. 11) for d = 4 at 100 Gb/s and "
                                              "d = 8 at 200 Gb/s, 128..2000 servers; table, cost.csv, fig11_cost.svg");
  topo->add_option("-o,--out", *tout, "Output directory")->capture_default_str();
  topo->callback([tout] {
    const auto study = eval::run_cost_study();
    fmt::print("{}", eval::format_cost_table(study));
    fmt::print("wrote:\n");
    for (const auto& f : eval::write_cost_outputs(study, *tout)) fmt::print("  {}\n", f);
  });
  struct SyndicateArgs {
    std::string out = "results/syndicate";
    std::vector<std::string> workloads;
    std::uint64_t seed = 1;
    long evaluations = 20000;
    bool quiet = false;
  };
  auto sargs = std::make_shared<SyndicateArgs>();
  auto* syn = rep->add_subcommand("syndicate", "SYNDICATE Sec. 6, simulated: the Fig. 6 example, DLRM-like models A1-A4 (Table 2) on the "
                                               "Table 1 testbed under SYNDICATE and the baselines; table, syndicate.csv, figures");
  syn->add_option("-o,--out", sargs->out, "Output directory")->capture_default_str();
  syn->add_option("--workloads", sargs->workloads, "Instead of the paper's: WORKLOAD[:TOPOLOGY] ... (topology default syndicate-testbed)");
  syn->add_option("--seed", sargs->seed, "Seed of the searches")->capture_default_str();
  syn->add_option("--evaluations", sargs->evaluations, "Plans costed per search")->capture_default_str();
  syn->add_flag("-q,--quiet", sargs->quiet, "No progress lines");
  syn->callback([sargs] {
    auto o = eval::default_syndicate_cases();
    if (!sargs->workloads.empty()) {
      o.cases.clear();
      for (const auto& w : sargs->workloads) {
        const auto colon = w.find(':');
        o.cases.push_back({w.substr(0, colon), colon == std::string::npos ? "syndicate-testbed" : w.substr(colon + 1), 0});
      }
    }
    if (sargs->evaluations < 1) throw InputError("--evaluations", "must be >= 1");
    o.seed = sargs->seed;
    o.evaluations = sargs->evaluations;
    o.progress = !sargs->quiet;
    const auto study = eval::run_syndicate_study(o);
    fmt::print("{}", eval::format_syndicate_table(study));
    fmt::print("wrote:\n");
    for (const auto& f : eval::write_syndicate_outputs(study, sargs->out)) fmt::print("  {}\n", f);
  });
#ifdef CHORUS_HAVE_RT
  register_reproduce_real_command(*rep);
#endif
}

}  // namespace chorus::cli
