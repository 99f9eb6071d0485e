#pragma once
// SYNDICATE's motif microbenchmarks (Sec. 6, Figs. 16-18) on this job's ranks, through the
// enforcer, each beside optSched's prediction on the `host` topology's analytical model:
//   fig16  all-reduce as one ring motif vs tree-splined, by size (shm);
//   fig17  all-to-all unsplined vs 2- and 4-way splined, by size (shm);
//   fig18  an all-reduce and an all-to-all ready together: both on one backend (shm), or on two
//          (all-reduce on shm, all-to-all on gloo) so that they overlap.
// `chorus run motifs` runs it under a launcher; `chorus reproduce syndicate-real` spawns that job
// and draws the figures.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace chorus::rt {

struct MotifBenchOptions {
  std::vector<std::string> sizes = {"256KiB", "1MiB", "4MiB", "16MiB"};  // per rank
  std::string overlap_size = "8MiB";                                     // fig18, each comm-op
  int repeat = 5;                                                        // measured runs (median), after one warm-up
};

// Collective over the job; initialises and finalises the runtime. Every rank returns
// {"rank", "ranks", "rows": [{"fig", "case", "variant", "size_bytes", "measured_ns",
// "predicted_ns", "check"}]}.
nlohmann::json run_motif_microbench_on_ranks(const MotifBenchOptions& options);
std::string format_motif_microbench(const nlohmann::json& report);

}  // namespace chorus::rt
