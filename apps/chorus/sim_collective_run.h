#pragma once
// `chorus sim collective`'s options and its run without the output: what the command prints and
// what `chorus sweep` records for each point are the same JSON.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/network.h"
#include "sim/run_collective.h"

namespace chorus::cli {

struct SimCollectiveArgs {
  std::string topology = "3D-SW_SW_SW_homo";
  std::string op = "allreduce";
  std::string size = "1GiB";
  int chunks = 64;
  std::string scheduler = "themis-scf";
  double threshold_divisor = 16.0;
  int max_chunks_per_dim = 0;
  bool json = false;
  bool schedules = false;
  std::string trace;
  std::string csv;
  std::string save_schedule;
  std::vector<std::string> degrade;  // DIM:FRACTION each
  std::string plan_on = "actual";    // nominal | actual
  std::string system;                // ASTRA-sim's system JSON
  bool chunks_given = false, scheduler_given = false, max_chunks_given = false;
};

struct SimCollectiveOutcome {
  net::Network network;  // the actual (degraded) network
  sim::CollectiveRun run;
  std::string planned_on;  // "nominal" | "actual" with degradations, else ""
};

// Checks the options and simulates; InputError names the flag at fault.
SimCollectiveOutcome simulate_collective(const SimCollectiveArgs& a);

// The --json object.
nlohmann::json collective_json(const SimCollectiveOutcome& out, bool schedules);

}  // namespace chorus::cli
