#pragma once
// `chorus sim workload`'s options and its run on a dimension network or a fabric without the output: what
// the command prints with --json and what `chorus sweep` records for each point are the same JSON.
#include <cstddef>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "apps/chorus/workload_dag_args.h"
#include "net/graph/graph_network.h"
#include "net/network.h"
#include "sim/flow_network.h"
#include "sim/dag_executor.h"
#include "workload/dag.h"

namespace chorus::cli {

struct SimWorkloadArgs : WorkloadDagArgs {
  std::string plan;  // a SYNDICATE plan file
  std::string topology = "3D-SW_SW_SW_homo";
  std::string scheduler = "themis-scf";
  int chunks = 64;
  bool json = false;
  std::string csv;
  std::string trace;
  std::string traffic_csv;     // fabrics: the server x server traffic matrix
  double batch_tolerance = 0;  // fabrics: flow::FlowEngine's
  std::string speeds;          // stragglers: per NPU compute speeds (sim/stragglers.h)
  bool scheduler_given = false;
  bool chunks_given = false;
  int max_chunks_per_dim = 0;
  bool max_chunks_given = false;
  std::string system;  // ASTRA-sim's system JSON
};

struct SimWorkloadOutcome {
  net::Network network;
  workload::Dag dag;
  sim::WorkloadSimOptions options;
  sim::WorkloadRun run;
  nlohmann::json json;  // the --json object
};

struct SimWorkloadFabricOutcome {
  net::GraphNetwork fabric;
  net::Network logical;  // the DAG's network (the parallel groups on the fabric's servers)
  workload::Dag dag;
  sim::FabricRun run;
  nlohmann::json json;  // the --json object
};

// On a fabric file (the flow-level model): checks the options, builds the training DAG, simulates.
SimWorkloadFabricOutcome simulate_workload_on_fabric(const SimWorkloadArgs& a);

// Checks the options, builds the training DAG and simulates it; InputError names the flag at fault.
SimWorkloadOutcome simulate_workload_on_dims(const SimWorkloadArgs& a,
                                             const std::function<void(std::size_t, std::size_t)>& progress = {});

}  // namespace chorus::cli
