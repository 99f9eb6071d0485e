#pragma once
// JSON and Chrome-trace forms of a simulated training workload (`chorus sim workload`).
#include <nlohmann/json.hpp>

#include "net/network.h"
#include "sim/dag_executor.h"
#include "sim/flow_network.h"
#include "workload/dag.h"

namespace chorus::sim {

// Keys: workload, topology, shape, npus, scheduler, chunks_per_collective, iterations,
// compute_model{peak_tflops, memory_bandwidth_GBps
// (memory_bandwidth_gbs: the same, deprecated spelling)}, per iteration (total / iterations):
// iteration_time_ns, compute_ns, forward_compute_ns, backward_compute_ns,
// optimizer_compute_ns, exposed_comm_ns, exposed_dp_comm_ns, exposed_mp_comm_ns,
// exposed_pp_comm_ns (with pipeline stages: the stages' means, and pipeline_stages[] with
// each stage's compute_ns and exposed_{dp,mp,pp}_comm_ns per iteration); over the
// whole run: total_time_ns, comm_active_ns, bytes_per_npu, avg_bw_utilization;
// nodes{compute, comm}; for a DAG generated from a model, layout (below).
nlohmann::json to_json(const net::Network& network, const workload::Dag& dag, const WorkloadSimOptions& options,
                       const DagResult& result);

// A DAG's parallel layout: tp, dp, pp {npus, dims[]} (dimensions from 0), ep {npus, dims[]}
// with expert layers, embeddings "all NPUs" for a hybrid DLRM's tables.
nlohmann::json to_json(const workload::ParallelLayout& layout);

// A run on a graph fabric (the flow-level model): the keys of to_json above (topology = the
// fabric's name, shape = the logical network the DAG was built on, scheduler "flow-level") and
// fabric{servers, switches, links, server_GBps
// (GB/s; server_gbps: Gb/s, deprecated)}, flow_model{flows, reallocations, events},
// link_utilization{mean, max} (bytes carried / (capacity x run time), over links that carried
// anything).
nlohmann::json to_json(const net::GraphNetwork& fabric, const net::Network& logical, const workload::Dag& dag,
                       const workload::ComputeModel& compute, const FabricRun& run);

// Process "compute": a track per pipeline stage with its compute nodes. Process
// "communication": every comm node from issue to completion, on as many tracks per stage as
// overlap. Process "dimensions" (with recorded stages; "stage s dimensions" per pipeline
// stage): every chunk stage's bandwidth phase per dimension.
nlohmann::json workload_trace(const net::Network& network, const workload::Dag& dag, const WorkloadRun& run);

}  // namespace chorus::sim
