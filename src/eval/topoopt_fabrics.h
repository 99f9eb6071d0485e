#pragma once
// The fabrics TopoOpt (NSDI'23) Sec. 5.1 compares, built for one job as graph networks with the
// ring orders their all-reduces use, so the flow-level model (sim/flow_network.h) can run the
// job's training DAG on each. Part of `chorus reproduce topoopt` (Figs. 12-13).
#include <cstdint>
#include <string>
#include <vector>

#include "net/graph/graph_network.h"
#include "sim/flow_network.h"
#include "topoopt/traffic.h"

namespace chorus::eval {

// "ideal-fat-tree", "cost-equivalent-fat-tree", "oversub-fat-tree", "expander", "sip-ml",
// "topoopt-oneshot", "topoopt-reconfig", in the order of the figures' legends.
const std::vector<std::string>& iteration_fabric_names();

// SiP-ML's wavelength reconfiguration latency (Sec. 5.1: "a reconfiguration latency of 25 us").
inline constexpr double kSipMlReconfigLatencyNs = 25e3;

struct JobFabric {
  std::string name;         // one of iteration_fabric_names()
  net::GraphNetwork graph;  // with the rings of the job's all-reduce groups, where the fabric has its own
  // topoopt-reconfig, sip-ml: the circuits of a reconfigurable fabric, re-planned every 50 ms.
  std::optional<sim::FlowNetworkOptions::Reconfiguration> reconfiguration;
  double server_gbps = 0;  // what one server can send at once
};

// The fabric `name` for `servers` servers of degree d at `gbps` per interface:
//  - ideal-fat-tree: one NIC of d x B (net::ideal_fat_tree);
//  - cost-equivalent-fat-tree: one NIC of the speed the cost model finds for TopoOpt-oneshot's
//    price (topoopt::fabric_cost, kCostEquivalentFatTree);
//  - oversub-fat-tree: NICs of d x B, ToRs of 16 servers (radix-32 switches, the cost model's),
//    uplinks at half (net::oversubscribed_fat_tree);
//  - expander: d random derangements (net::expander, `seed`);
//  - sip-ml: d wavelengths per server that can reach any server (a full mesh of potential links),
//    starting as SiP-Ring's physical ring (ceil(d/2) wavelengths clockwise, floor(d/2)
//    counter-clockwise), re-allocated like topoopt-reconfig but by Algorithm 5 with Discount = 1
//    and a 25 us latency (Appendix E); all-reduces on both ring directions;
//  - topoopt-oneshot: TopologyFinder on `traffic` (the job's first iteration), its AllReduce
//    groups' all-reduces split over the rings it gave them;
//  - topoopt-reconfig: d OCSs: circuits between any servers (a full mesh of potential links),
//    starting as TopologyFinder's links, then every 50 ms Algorithm 5 (topoopt/reconfig_links.h)
//    on the demand left, each change stopping all links for `reconfig_latency_ns` (Appendix D).
// InputError naming `field` for an unknown fabric.
JobFabric job_fabric(const std::string& name, int servers, int degree, double gbps, const topoopt::Traffic& traffic,
                     std::uint64_t seed = 1, const std::string& field = "fabric", double reconfig_latency_ns = 10e6);

}  // namespace chorus::eval
