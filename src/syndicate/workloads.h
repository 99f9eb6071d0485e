#pragma once
// The training DAG the optimizer plans: the built-in Fig. 6 example, SYNDICATE's evaluation
// workloads (syndicate-a1 .. a4, moe-tiny: dlrm_models.h), or a workload of the model
// zoo / a workload YAML file (workload/zoo.h, workload_yaml.h) built for the topology's
// dimensions, unrolled over `iterations` (the paper unrolls two, Sec. 4.3).
#include <string>

#include "syndicate/topology.h"
#include "workload/dag.h"

namespace chorus::syndicate {

workload::Dag load_workload_dag(const std::string& name_or_path, const Topology& topo, int iterations,
                                const std::string& field = "workload");

}  // namespace chorus::syndicate
