#pragma once
// The training DAG on a graph fabric (TopoOpt, NSDI'23, Sec. 5.1): a NetworkModel that carries
// each communication node as flows of the flow-level model (sim/flow) over a GraphNetwork.
//
// The DAG is one NPU's view of a synchronous job on a logical multi-dimensional network (its
// `dims`); NPU i of that network is server i of the fabric (one accelerator per server), or
// server placement[i] (FlowNetworkOptions::placement). A
// communication node runs on every group of servers it spans at once, and ends when the slowest
// group has ended (the job's collectives are synchronous):
//  - all-reduce, reduce-scatter, all-gather over dimensions D: per group of servers that differ
//    only in D, a ring of 2(n-1) or n-1 steps of bytes/n (pipelined by default, see
//    FlowNetworkOptions; sim/flow/traffic.h) in the order of its NPUs, or several rings sharing
//    the bytes equally when the fabric lists rings for that group (GraphNetwork::rings: TopoOpt's
//    AllReduce sub-topology gives a group d_k rings);
//  - all-to-all over D: every member sends bytes/n to every other member, all at once;
//  - point-to-point on dimension d: every server sends `bytes` to the next server along d.
// Parallel links are merged into one link of their summed bandwidth (net::merge_parallel_links).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>
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
  // Device placement: NPU i of the logical network runs on server placement[i] (a permutation of
  // the servers); empty: server i. A parallelization search moves NPUs between servers with it.
  std::vector<int> placement;

  // A reconfigurable circuit fabric (TopoOpt-reconfig, Appendix D; SiP-ML): the fabric is a full
  // mesh of potential links u -> v, each carrying (circuits on u -> v) x circuit_gbps. Every
  // period, the demand left in the flows then sending (bytes per ordered server pair) goes to
  // `allocate`, which returns the circuits (pairs, a pair once per circuit); when they differ
  // from the current ones, every link stops for `latency_ns` and then carries the new circuits.
  // A period without demand keeps the circuits. Flows between servers without a circuit wait;
  // when some wait while a circuit carries nothing, the circuits are re-planned at once
  // (demand-driven, Appendix D) instead of at the next boundary, which then comes a period later.
  struct Reconfiguration {
    double period_ns = 50e6;    // "every 50 ms"
    double latency_ns = 10e6;   // the OCS's reconfiguration time (Fig. 15 sweeps it)
    double circuit_gbps = 100;  // B
    // Also re-plan at once when flows wait while a circuit carries nothing (our default), or only
    // at the period's boundaries, as Appendix D says ("we collect the unsatisfied traffic demand
    // every 50 ms").
    bool on_demand = true;
    std::vector<std::pair<int, int>> initial;  // circuits from time 0
    std::function<std::vector<std::pair<int, int>>(const std::vector<std::tuple<int, int, double>>&)> allocate;
  };
  std::optional<Reconfiguration> reconfiguration;
};

class FlowNetwork;

// A fabric (parallel links merged), its routes and one flow engine. A FlowNetwork owns one; several
// FlowNetworks, one per job, can share one (sim/jobs): their flows then share the links max-min
// fairly, and whichever of them steps the engine hands every finished comm node to its network.
class SharedFlows {
 public:
  // InputError when the fabric is invalid (net::validate).
  explicit SharedFlows(const net::GraphNetwork& fabric, double batch_tolerance = 0.0);
  SharedFlows(const SharedFlows&) = delete;
  SharedFlows& operator=(const SharedFlows&) = delete;
  const net::GraphNetwork& fabric() const { return fabric_; }
  const flow::FlowEngine& engine() const { return engine_; }
  // Per link bytes in windows of time (flow::FlowEngine::record_link_windows); before any flow.
  void record_link_windows(double window_ns) { engine_.record_link_windows(window_ns); }
  // Faults that change during a run (sim/jobs/timed_link_faults.h): time moves to `at_ns` (no
  // event of the engine before it) and every link has the capacity `gbps` from then on; the flows
  // are re-rated at once. While links are at 0 (down), flows take the fewest-hop routes around
  // them: those that start then, and those not yet sent whose path crosses one, which move at this
  // instant (FlowEngine::reroute) and keep the detour until they end. When the links down cut some
  // server off from another, flows keep their routes, and those on a link down wait for it.
  void set_capacities_at(double at_ns, const std::vector<double>& gbps);
  // The routes for flows that start now.
  const net::Router& router() const { return detour_ ? *detour_ : router_; }

 private:
  friend class FlowNetwork;
  net::GraphNetwork fabric_;
  net::Router router_;
  std::unique_ptr<net::Router> detour_;  // while links are down (set_capacities_at): around them
  flow::FlowEngine engine_;
  std::unordered_map<int, std::pair<FlowNetwork*, int>> join_;  // final flow of a comm node -> its network, DAG node
  std::vector<int> completed_;
};

class FlowNetwork : public NetworkModel {
 public:
  // InputError when the fabric's server count differs from the logical network's NPU count, its
  // rings are invalid (net::validate), or the placement is not a permutation of the servers.
  FlowNetwork(const net::GraphNetwork& fabric, const net::Network& logical, FlowNetworkOptions options = {});
  // One job of several on `shared`'s fabric: NPU i of `logical` runs on server servers[i] (distinct
  // servers of the fabric, as many as the NPUs, else InputError naming `where`).
  FlowNetwork(SharedFlows& shared, const net::Network& logical, std::vector<int> servers, const std::string& where);

  void start(int id, const workload::Node& comm, double now_ns) override;
  // The flows start(comm) adds, and room in the engine for those of every node of `dag` that has
  // bytes to send: one allocation for millions of flows instead of a growing vector's copies.
  std::size_t flows_of(const workload::Node& comm);
  void reserve_flows(const workload::Dag& dag);
  bool idle() const override { return in_flight_ == 0; }
  double next_event_ns() const override;
  void step(std::vector<int>& finished) override;
  double bytes_sent_per_npu() const override { return bytes_sent_ / static_cast<double>(logical_.num_npus()); }

  // The fabric as simulated (parallel links merged) and the engine, for link utilization and the
  // traffic matrix.
  const net::GraphNetwork& fabric() const { return fabric_; }
  const flow::FlowEngine& engine() const { return engine_; }
  // Reconfigurable fabrics: how often the circuits changed, and the time links were down.
  int reconfigurations() const { return reconfigurations_; }
  double reconfiguring_ns() const { return reconfiguring_ns_; }

 private:
  const std::vector<std::vector<int>>& groups(const std::vector<int>& dims);
  const std::vector<std::vector<int>>& rings_of(const std::vector<int>& group) const;
  void index_rings();  // rings_ from the fabric's

  std::unique_ptr<SharedFlows> own_;  // unless shared with other jobs
  SharedFlows& shared_;
  const net::GraphNetwork& fabric_;
  const net::Network& logical_;
  FlowNetworkOptions options_;
  flow::FlowEngine& engine_;
  std::map<std::vector<int>, std::vector<std::vector<int>>> groups_;  // dims -> groups
  std::map<std::vector<int>, std::vector<std::vector<int>>> rings_;   // group -> ring orders
  int in_flight_ = 0;          // comm nodes started and not yet handed back by step()
  std::vector<int> finished_;  // nodes that finished while another job's network stepped the engine
  double bytes_sent_ = 0;

  // Reconfiguration (options_.reconfiguration): mesh link of each ordered pair, the circuits in
  // force, the next period boundary, and circuits waiting for the end of a reconfiguration.
  std::vector<double> circuit_capacities(const std::vector<std::pair<int, int>>& circuits) const;
  void reconfigure();
  double reconfiguration_event_ns() const;
  void demand_driven_trigger();
  std::map<std::pair<int, int>, int> mesh_link_;
  std::vector<std::pair<int, int>> circuits_;
  double next_boundary_ns_ = 0;
  std::optional<std::vector<std::pair<int, int>>> pending_;
  double pending_at_ns_ = 0;
  int reconfigurations_ = 0;
  double reconfiguring_ns_ = 0;
};

struct FabricRun {
  DagResult result;
  net::GraphNetwork fabric;                 // as simulated (parallel links merged)
  flow::FlowResult flows;                   // per link bytes and busy time; reallocations, events
  std::vector<double> link_capacity_bytes;  // per link: capacity x time over the run (circuits vary)
  std::size_t flow_count = 0;
  std::vector<std::vector<double>> traffic;  // server x server bytes sent (all iterations)
  int reconfigurations = 0;                  // reconfigurable fabrics: circuit changes
  double reconfiguring_ns = 0;               // and the time links were down for them
};

// The DAG (built on `logical`) on `fabric`, compute from the roofline `compute`.
FabricRun simulate_workload(const workload::Dag& dag, const net::Network& logical, const net::GraphNetwork& fabric,
                            const workload::ComputeModel& compute, FlowNetworkOptions options = {});

// Bytes each link carried over what its capacity could carry in the run's time (on a circuit
// fabric, the capacity its circuits gave it over time), over the links that carried anything.
struct LinkUtilization {
  double mean = 0;
  double max = 0;
  int links_used = 0;
};
LinkUtilization link_utilization(const FabricRun& run);

// A server's bandwidth summed over its out-links, averaged over the servers (Gb/s).
double server_bandwidth_gbps(const net::GraphNetwork& fabric);

}  // namespace chorus::sim
