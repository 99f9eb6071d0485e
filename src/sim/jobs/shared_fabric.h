#pragma once
// Several training jobs on one graph fabric: each job's DAG runs on its own compute streams, and the
// communication of all jobs runs as flows of ONE flow engine (sim::SharedFlows), so jobs whose
// flows cross a link share it max-min fairly (docs/shared-fabric.md).
#include <string>
#include <vector>

#include "net/graph/graph_network.h"
#include "net/network.h"
#include "sim/dag_executor.h"
#include "sim/flow/flow_model.h"
#include "sim/jobs/timed_link_faults.h"
#include "workload/dag.h"

namespace chorus::sim::jobs {

struct SharedJob {
  std::string name;
  workload::Dag dag;               // one stage (the flow-level model runs no pipeline)
  net::Network logical;            // the DAG's logical network; NPU i runs on servers[i]
  std::vector<int> servers;        // distinct servers of the fabric
  std::vector<double> compute_ns;  // per DAG node (comm nodes: ignored)
  double start_ns = 0;
};

struct JobTimeline {
  DagResult result;                  // total_ns counts from the job's start; node times are absolute
  std::vector<double> iteration_ns;  // per iteration: its last node's end minus the previous one's (or the start)
};

struct SharedFabricRun {
  std::vector<JobTimeline> jobs;
  net::GraphNetwork fabric;                 // as simulated (parallel links merged)
  flow::FlowResult flows;                   // per link bytes and busy time, over all jobs
  std::vector<double> link_capacity_bytes;  // per link: capacity x makespan
  double makespan_ns = 0;                   // the last job's end
  std::size_t flow_count = 0;
  // With link_window_ns > 0: per window [i w, (i + 1) w) of time, per link, the bytes carried
  // (flow::FlowEngine::record_link_windows), windows up to the last that carried a byte.
  double link_window_ns = 0;
  std::vector<std::vector<double>> link_window_bytes;
};

// Runs the jobs together. Events are taken in time order over all jobs (the lowest job on ties).
// InputError for a job the flow model cannot run (several pipeline stages, servers out of range).
// link_window_ns > 0 also records every link's bytes per window of that length (utilization over time).
// `timed_faults` change link capacities during the run (at their instants, after the jobs' events
// of the same instant); InputError naming a fault as capacity_changes does.
SharedFabricRun simulate_shared_fabric(const net::GraphNetwork& fabric, const std::vector<const SharedJob*>& jobs,
                                       double batch_tolerance = 0.0, double link_window_ns = 0.0,
                                       const std::vector<TimedLinkFault>& timed_faults = {});

}  // namespace chorus::sim::jobs
