#pragma once
// `chorus plan`'s options and its --json summary without the output: what the command prints and
// what `chorus sweep` records for each point are the same JSON.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace chorus::cli {

struct PlanArgs {
  std::string workload = "syndicate-fig6";
  std::string topology = "syndicate-fig6";
  int ranks = 4;
  std::string launcher = "launch";
  int iterations = 2;
  std::string budget = "10s";
  long evaluations = 20000;
  std::uint64_t seed = 1;
  double beta = 1e4;
  std::string baseline = "bs+";
  bool all = false;
  std::string out;
  std::string evaluate;
  std::string trace;
  bool json = false;
};

// Searches (or, with `evaluate`, re-simulates a plan file) and returns the --json summary;
// InputError names the flag at fault.
nlohmann::json plan_result(const PlanArgs& a);

}  // namespace chorus::cli
