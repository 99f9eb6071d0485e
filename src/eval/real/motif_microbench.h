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

namespace chorus::eval {

struct MotifBenchOptions {
  std::vector<std::string> sizes = {"256KiB", "1MiB", "4MiB", "16MiB"};  // per rank
  std::string overlap_size = "8MiB";                                     // fig18, each comm-op
  int repeat = 5;                                                        // measured runs (median), after one warm-up
};

// One measured case: a figure's comm-op and variant at one size, the slowest rank's median time
// beside optSched's prediction, and the element-wise check ("passed" or what failed).
struct MotifBenchRow {
  std::string fig;        // fig16, fig17, fig18
  std::string comm_op;    // "all_reduce", "all_to_all", "all_reduce + all_to_all" (JSON and CSV: "case")
  std::string variant;    // "ring", "tree", "2-way", "one backend (shm)", ...
  double size_bytes = 0;  // per rank
  double measured_ns = 0, predicted_ns = 0;
  std::string check;
};

struct MotifBenchReport {
  int rank = 0, ranks = 0, repeat = 0;
  std::vector<MotifBenchRow> rows;
};

// A motif's size per rank (`sizes`, `overlap_size`) on `ranks` ranks: a byte size of at least
// one f32 element for every rank (4 x ranks bytes), since the all-to-all sends each rank a block
// and a motif of no data has nothing to move or check; InputError(field, ...) naming the value
// and the least size otherwise.
double parse_motif_size(const std::string& text, const std::string& field, int ranks);

// Collective over the job; initialises and finalises the runtime. Every rank returns the report.
MotifBenchReport run_motif_microbench_on_ranks(const MotifBenchOptions& options);

// What `chorus run motifs --json` prints: {"rank", "ranks", "repeat", "rows": [{"fig", "case",
// "variant", "size_bytes", "measured_ns", "predicted_ns", "check"}]}; and that JSON read back
// (a job's report, `reproduce syndicate-real`), InputError naming `where` if it is not one.
nlohmann::json motif_report_json(const MotifBenchReport& report);
MotifBenchReport motif_report_from_json(const nlohmann::json& j, const std::string& where);

// The rows as a table.
std::string format_motif_microbench(const MotifBenchReport& report);

}  // namespace chorus::eval
