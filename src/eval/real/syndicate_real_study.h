#pragma once
// `chorus reproduce syndicate-real`: SYNDICATE's motif microbenchmarks (Figs. 16-18) run for real
// as one `chorus launch -n N -- chorus run motifs --json` job (eval/real/motif_microbench.h); writes
// motifs.csv, the figures come from chorus.plot ("syndicate-real").
#include <string>

#include "eval/real/motif_microbench.h"

namespace chorus::eval {

struct SyndicateRealOptions {
  std::string out = "results/syndicate-real";
  int ranks = 4;  // the figures need 4 (tree splining, 4-way all-to-all); docs/syndicate.md on 2-core hosts
  std::string sizes = "256KiB,1MiB,4MiB,16MiB";
  int repeat = 5;
  bool quiet = false;
};

// Runs the job (spawning this executable); returns its report (rank 0's). The figures are drawn
// separately: draw_figures("syndicate-real", out) (core/plot_call.h).
MotifBenchReport run_syndicate_real(const SyndicateRealOptions& options);

// DIR/motifs.csv: one line per row, with the job's ranks and the measured/predicted ratio.
// Returns the path.
std::string write_syndicate_real_outputs(const MotifBenchReport& report, const std::string& dir);

}  // namespace chorus::eval
