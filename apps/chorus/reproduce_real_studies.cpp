// chorus reproduce syndicate-real | themis-real: the studies on real ranks (src/eval/real), each
// a job of this executable under `chorus launch`; capture-validation: torch programs captured and
// simulated on this host (src/capture). Listed with every other study in reproduce_commands.cpp's
// table.
#include <iostream>
#include <memory>

#include "apps/chorus/output_checks.h"
#include "apps/chorus/reproduce_studies.h"
#include "capture/capture_validation.h"
#include "core/plot_call.h"
#include "eval/real/motif_microbench.h"
#include "eval/real/syndicate_real_study.h"
#include "eval/real/themis_real_study.h"

namespace chorus::cli {

void add_syndicate_real(CLI::App& cmd) {
  auto so = std::make_shared<eval::SyndicateRealOptions>();
  cmd.add_option("-o,--out", so->out, "Output directory")->capture_default_str()->check(kWritableDir);
  cmd.add_option("-n,--ranks", so->ranks, "Ranks (tree splining needs 3, the 4-way all-to-all 4)")
      ->capture_default_str();
  cmd.add_option("--sizes", so->sizes, "Sizes per rank, comma-separated")->capture_default_str();
  cmd.add_option("--repeat", so->repeat, "Measured runs per row (median)")->capture_default_str();
  cmd.add_flag("-q,--quiet", so->quiet, "No progress lines");
  cmd.callback([so] {
    const auto report = eval::run_syndicate_real(*so);
    eval::write_syndicate_real_outputs(report, so->out);
    std::cout << eval::format_motif_microbench(report);
    chorus::draw_figures("syndicate-real", so->out);
    std::cout << "wrote " << so->out << "/motifs.csv, fig16_all_reduce.svg, fig17_all_to_all.svg, fig18_overlap.svg\n";
  });
}

void add_themis_real(CLI::App& cmd) {
  auto o = std::make_shared<eval::ThemisRealOptions>();
  cmd.add_option("-o,--out", o->out, "Output directory")->capture_default_str()->check(kWritableDir);
  cmd.add_option("-s,--size", o->size, "All-reduce size per rank")->capture_default_str();
  cmd.add_option("-c,--chunks", o->chunks, "Chunks")->capture_default_str();
  cmd.add_option("--iters", o->iters, "Measured iterations per row (median)")->capture_default_str();
  cmd.add_option("--random", o->random,
                 "Random heterogeneous networks (4-8 ranks, 2-3 dimensions of mixed kinds) after the three fixed ones")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--seed", o->seed, "Seed the random networks are drawn from (the same networks for the same seed)")
      ->capture_default_str();
  cmd.add_flag("-q,--quiet", o->quiet, "No progress lines");
  cmd.callback([o] {
    const auto rows = eval::run_themis_real(*o);
    eval::write_themis_real_outputs(rows, o->out);
    std::cout << eval::format_themis_real(rows);
    // real_vs_sim.svg, speedup.svg (python/chorus/plot/themis_real.py), after the table.
    chorus::draw_figures("themis-real", o->out);
    std::cout << "wrote " << o->out << "/real_vs_sim.csv, real_vs_sim.svg, speedup.svg, networks/\n";
  });
}

void add_capture_validation(CLI::App& cmd) {
  auto o = std::make_shared<capture::ValidationOptions>();
  auto full = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  cmd.add_option("-o,--out", o->out, "Output directory (the captures under captures/)")
      ->capture_default_str()
      ->check(kWritableDir);
  auto* ranks =
      cmd.add_option("--ranks", o->ranks, "Rank counts, comma-separated")->capture_default_str()->delimiter(',');
  auto* backends = cmd.add_option("--backends", o->backends, "Backends the programs run on: shm, gloo")
                       ->capture_default_str()
                       ->delimiter(',');
  cmd.add_option("--runs", o->runs, "Captures per row (the row is their median)")->capture_default_str();
  cmd.add_flag("--full", *full, "2 and 4 ranks, shm and gloo")->excludes(ranks)->excludes(backends);
  cmd.add_option("--programs", o->programs, "Only these programs: ddp-mlp, moe, dlrm, validation (comma-separated)")
      ->delimiter(',');
  cmd.add_flag("--small", o->small, "The programs' small sizes (the test's; seconds a run)");
  cmd.add_option("--python", o->python, "The interpreter with torch")->capture_default_str();
  cmd.add_flag("-q,--quiet", *quiet, "No progress lines");
  cmd.footer(
      "Each program is captured (chorus capture: 22 steps, the window 3..5, the host window 8..12) --runs\n"
      "times; measured: the median of its unrecorded steps 15..21; predicted: the window simulated on\n"
      "--topology host with the host window's operator times, between two collectives the slowest rank's. "
      "docs/capture.md, \"How close is the prediction?\"");
  cmd.callback([o, full, quiet] {
    if (*full) {
      o->ranks = {2, 4};
      o->backends = {"shm", "gloo"};
    }
    o->chorus_version = CHORUS_VERSION;
    if (!*quiet) o->progress = [](const std::string& line) { std::cerr << "capture-validation: " << line << "\n"; };
    const auto study = capture::run_capture_validation(*o);
    const auto files = capture::write_capture_validation(study, o->out);
    std::cout << capture::format_capture_validation(study);
    const auto figures = chorus::draw_figures("capture-validation", o->out);
    std::cout << "wrote:\n";
    for (const auto& f : files) std::cout << "  " << f << "\n";
    for (const auto& f : figures) std::cout << "  " << f << "\n";
  });
}

}  // namespace chorus::cli
