#pragma once
// The commands `chorus sweep` runs, each point through the same function as the command itself
// (sim_collective_run.h, sim_workload_run.h): the parameters a spec may give (the command's flags
// without "--") and the point's result, its --json object flattened.
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep/spec.h"

namespace chorus::cli {

struct SweepCommand {
  sweep::CommandDef def;
  std::function<nlohmann::ordered_json(const sweep::Point&)> run;  // throws InputError naming file:line, field
};

const std::vector<SweepCommand>& sweep_commands();

}  // namespace chorus::cli
