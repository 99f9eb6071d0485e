#pragma once
// The flags that say which training DAG to build (zoo name, workload YAML, ASTRA-sim text,
// Chakra trace, PyTorch execution graph, with the parallelism options), shared by `chorus sim workload` and
// `chorus export`; both build the DAG with make_workload_dag (sim_workload_command.cpp).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "net/network.h"
#include "workload/dag.h"

namespace chorus::cli {

struct WorkloadDagArgs {
  std::string workload = "resnet152";
  int iterations = 3;
  std::string bucket;
  double peak_tflops = 312;
  double memory_bandwidth_gbs = 1555;
  bool no_dp_overlap = false;
  int tp = 0;            // 0: the model's tensor-parallel group (mp_npus)
  int dp = 0;            // 0: the NPUs between the tensor- and pipeline-parallel groups
  int pp = 0;            // 0: the model's (1 unless its YAML says)
  int microbatches = 0;  // 0: the model's, else 4 x stages
  std::string pipeline_schedule;
  double ns_per_cycle = 1.0;
  int rank = -1;
  bool chakra_skip_unsupported = false;
  bool chakra_ctrl_deps = false;
  bool check_ranks = false;     // Chakra traces and execution graphs: every rank's file issues the same collectives
  std::string profile_trace;    // execution graphs: a torch profiler trace whose durations replace the roofline's
  std::string collective_dims;  // execution graphs: "K=D[,D...];..." the dimensions collective K's group spans
  int world = 0;                // captures: the world the capture is scaled to (0: its own ranks)
  double compute_scale = 1;     // every compute node this many times as fast (workload/compute_scale.h)
  std::vector<std::string> grow_groups;  // captures with `world`: the sub-groups that grow with it
};

workload::Dag make_workload_dag(const WorkloadDagArgs& a, const net::Network& network);

// The network --topology names: a preset or network YAML, or `host` for a chorus capture (-w DIR):
// this host's measured model for the capture's ranks and backend (capture/host_network.h).
// `world` (> 0): the capture scaled to that many ranks (host: that many ranks on this machine's model).
net::Network workload_network(const std::string& topology, const std::string& workload, int world = 0);

// The what-if flags --world, --grow-groups and --compute-scale on `cmd` (sim workload, export --chakra).
void add_what_if_options(CLI::App& cmd, WorkloadDagArgs& args);

}  // namespace chorus::cli
