#pragma once
// `chorus reproduce syndicate-real`: SYNDICATE's motif microbenchmarks (Figs. 16-18) run for real
// as one `chorus launch -n N -- chorus run motifs --json` job (eval/real/motif_microbench.h); writes
// motifs.csv, the figures come from chorus.plot ("syndicate-real").
#include <string>

#include <nlohmann/json.hpp>

namespace chorus::rt {

struct SyndicateRealOptions {
  std::string out = "results/syndicate-real";
  int ranks = 4;  // the figures need 4 (tree splining, 4-way all-to-all); docs/syndicate.md on 2-core hosts
  std::string sizes = "256KiB,1MiB,4MiB,16MiB";
  int repeat = 5;
  bool quiet = false;
};

// Runs the job, writes DIR/motifs.csv; returns the job's report.
nlohmann::json run_syndicate_real(const SyndicateRealOptions& options);

}  // namespace chorus::rt
