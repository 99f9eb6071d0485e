#include "eval/real/rank_programs.h"

#include <type_traits>

namespace chorus::eval {

namespace {

// Each line spelling a flag is chorus's own command line for a child process (scripts/check-cli-flags.sh).
std::vector<std::string> args_of(const RunCollectiveArgs& a) {
  std::vector<std::string> v = {"run", "collective"};
  v.insert(v.end(), {"-t", a.topology, "--size", a.size});                                        // cli-command-line
  v.insert(v.end(), {"--chunks", std::to_string(a.chunks), "--scheduler", a.scheduler});          // cli-command-line
  if (a.emulate) v.emplace_back("--emulate");                                                     // cli-command-line
  v.insert(v.end(), {"--iters", std::to_string(a.iters), "--warmup", std::to_string(a.warmup)});  // cli-command-line
  v.insert(v.end(), {"--dim-backends", a.dim_backends});                                          // cli-command-line
  if (a.json) v.emplace_back("--json");                                                           // cli-command-line
  return v;
}

std::vector<std::string> args_of(const RunMotifsArgs& a) {
  std::vector<std::string> v = {"run", "motifs"};
  v.insert(v.end(), {"--sizes", a.sizes, "--repeat", std::to_string(a.repeat)});  // cli-command-line
  if (a.json) v.emplace_back("--json");                                           // cli-command-line
  return v;
}

}  // namespace

std::vector<std::string> rank_argv(const std::string& exe, const RankProgram& program) {
  std::vector<std::string> argv = {exe};
  const auto args = std::visit([](const auto& a) { return args_of(a); }, program);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace chorus::eval
