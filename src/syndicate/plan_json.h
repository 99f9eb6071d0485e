#pragma once
// The plan file (`chorus plan --out plan.json`; format: docs/syndicate.md): for every comm-op of
// the unrolled DAG its option and its steps with sequence numbers, channels and predicted times,
// plus the method, order and predicted iteration time. The simulator and the runtime's enforcer
// read it back against the same workload and topology.
#include <nlohmann/json.hpp>
#include <string>

#include "syndicate/joint_optimizer.h"

namespace chorus::syndicate {

nlohmann::json plan_to_json(const Problem& problem, const MethodResult& result);

struct LoadedPlan {
  PlanChoice plan;
  SchedOptions sched;
  double iteration_time_ns = 0;  // as predicted when it was written
};

// Reads a plan written for `problem` (same workload, topology, iterations); every mismatch is an
// InputError naming `source` and the field (comm_ops[i].option.path, ...).
LoadedPlan plan_from_json(const Problem& problem, const nlohmann::json& j, const std::string& source);
LoadedPlan read_plan_file(const Problem& problem, const std::string& path);

}  // namespace chorus::syndicate
