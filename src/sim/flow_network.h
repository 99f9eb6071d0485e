#pragma once
// The training DAG on a graph fabric (TopoOpt, NSDI'23, Sec. 5.1): a NetworkModel that carries
// each communication node as flows of the flow-level model (sim/flow) over a GraphNetwork.
//
// The DAG is one NPU's view of a synchronous job on a logical multi-dimensional network (its
// `dims`); NPU i of that network is server i of the fabric (one accelerator per server). A
// communication node runs on every group of servers it spans at once, and ends when the slowest
// group has ended (the job's collectives are synchronous):
//  - all-reduce, reduce-scatter, all-gather over dimensions D: per group of servers that differ
//    only in D, a ring of 2(n-1) or n-1 steps of bytes/n (pipelined by default, see
//    FlowNetworkOptions; sim/flow/traffic.h) in ascending server order, or several rings sharing
//    the bytes equally when the fabric lists rings for that group (GraphNetwork::rings: TopoOpt's
//    AllReduce sub-topology gives a group d_k rings);
//  - all-to-all over D: every member sends bytes/n to every other member, all at once;
//  - point-to-point on dimension d: every server sends `bytes` to the next server along d.
// Parallel links are merged into one link of their summed bandwidth (net::merge_parallel_links).
#include <map>
#include <unordered_map>
#include <vector>

#include "net/graph/graph_network.h"
#include "net/graph/routing.h"
#include "net/network.h"
#include "sim/dag_executor.h"
#include "sim/flow/flow_model.h"
#include "sim/network_model.h"
#include "workload/compute_model.h"

namespace chorus::sim {

struct FlowNetworkOptions {
  // Ring collectives pipelined (one flow per ring edge, flow::ring_pipelined: the default) or in
  // barrier-separated steps (flow::ring_collective: 2n(n-1) flows per all-reduce).
  bool stepped_rings = false;
  // flow::FlowEngine's batch_tolerance (0: exact).
  double batch_tolerance = 0.0;
};

class FlowNetwork : public NetworkModel {
 public:
  // InputError when the fabric's server count differs from the logical network's NPU count, or
  // its rings are invalid (net::validate).
  FlowNetwork(const net::GraphNetwork& fabric, const net::Network& logical, FlowNetworkOptions options = {});

  void start(int id, const workload::Node& comm, double now_ns) override;
  bool idle() const override { return engine_.idle(); }
  double next_event_ns() const override { return engine_.next_event_ns(); }
  void step(std::vector<int>& finished) override;
  double bytes_sent_per_npu() const override { return bytes_sent_ / fabric_.servers; }

  // The fabric as simulated (parallel links merged) and the engine, for link utilization and the
  // traffic matrix.
  const net::GraphNetwork& fabric() const { return fabric_; }
  const flow::FlowEngine& engine() const { return engine_; }

 private:
  const std::vector<std::vector<int>>& groups(const std::vector<int>& dims);
  const std::vector<std::vector<int>>& rings_of(const std::vector<int>& group) const;

  net::GraphNetwork fabric_;
  const net::Network& logical_;
  FlowNetworkOptions options_;
  net::Router router_;
  flow::FlowEngine engine_;
  std::map<std::vector<int>, std::vector<std::vector<int>>> groups_;  // dims -> groups
  std::map<std::vector<int>, std::vector<std::vector<int>>> rings_;   // group -> ring orders
  std::unordered_map<int, int> node_of_join_;  // final flow of a comm node -> DAG node id
  std::vector<int> completed_;
  double bytes_sent_ = 0;
};

struct FabricRun {
  DagResult result;
  net::GraphNetwork fabric;  // as simulated (parallel links merged)
  flow::FlowResult flows;    // per link bytes and busy time; reallocations, events
  std::size_t flow_count = 0;
  std::vector<std::vector<double>> traffic;  // server x server bytes sent (all iterations)
};

// The DAG (built on `logical`) on `fabric`, compute from the roofline `compute`.
FabricRun simulate_workload(const workload::Dag& dag, const net::Network& logical, const net::GraphNetwork& fabric,
                            const workload::ComputeModel& compute, FlowNetworkOptions options = {});

// A server's bandwidth summed over its out-links, averaged over the servers (Gb/s).
double server_bandwidth_gbps(const net::GraphNetwork& fabric);

}  // namespace chorus::sim
