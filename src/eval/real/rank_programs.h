#pragma once
// The rank programs the real studies run as jobs of this executable, as typed values: `chorus
// run collective` (themis-real) and `chorus run motifs` (syndicate-real), each with the fields a
// study sets, and the one function that turns them into the program's argv.
#include <string>
#include <variant>
#include <vector>

namespace chorus::eval {

// `chorus run collective`: a Themis schedule made for a network and run on the job's ranks.
struct RunCollectiveArgs {
  std::string topology;  // preset or network YAML
  std::string size;      // per rank, e.g. "8MiB"
  int chunks = 16;
  std::string scheduler = "themis-scf";
  bool emulate = false;  // pace every stage to the network model
  int iters = 5;
  int warmup = 1;
  std::string dim_backends = "auto";
  bool json = true;  // rank 0 prints one JSON object
};

// `chorus run motifs`: SYNDICATE's motif microbenchmarks.
struct RunMotifsArgs {
  std::string sizes;  // per rank, comma-separated
  int repeat = 5;
  bool json = true;  // rank 0 prints one JSON object
};

using RankProgram = std::variant<RunCollectiveArgs, RunMotifsArgs>;

// The argv of `program` run by the chorus executable `exe` (its first word).
std::vector<std::string> rank_argv(const std::string& exe, const RankProgram& program);

}  // namespace chorus::eval
