#pragma once
// Builders for the comparison fabrics of TopoOpt (NSDI'23) Sec. 5.1 and Appendix E as
// GraphNetworks. docs/graph-networks.md quotes the paper and states each modelling choice.
// Every builder uses the paper's per-hop latency (1 us) unless told otherwise.
#include <cstdint>
#include <utility>
#include <vector>

#include "net/graph/graph_network.h"

namespace chorus::net {

// Full-bisection Fat-tree with one NIC of `nic_gbps` per server, modelled as one non-blocking
// switch (node `servers`) with a link of nic_gbps each way per server.
GraphNetwork fat_tree(int servers, double nic_gbps, double latency_ns = kDefaultHopLatencyNs);

// Ideal Fat-tree: each server one NIC of d x B.
GraphNetwork ideal_fat_tree(int servers, int degree, double link_gbps, double latency_ns = kDefaultHopLatencyNs);

// 2:1 oversubscribed Fat-tree: ToRs of `servers_per_tor` servers (the last may be smaller), each
// server one link of nic_gbps each way to its ToR, each ToR one uplink each way to a non-blocking
// core switch of (servers under the ToR) * nic_gbps / 2 ("half of the links at the ToR uplink
// layer are omitted"). Nodes: servers, then ToRs, then the core.
GraphNetwork oversubscribed_fat_tree(int servers, int servers_per_tor, double nic_gbps,
                                     double latency_ns = kDefaultHopLatencyNs);

// Expander: each server `degree` out-links and `degree` in-links of link_gbps, the union of
// `degree` random derangements (no self loops; parallel links possible) drawn with chorus::Rng.
// If the result is not strongly connected, seed+1, seed+2, ... are tried (at most 1000).
// The seed actually used is stored in the name ("expander-d8-seed3").
GraphNetwork expander(int servers, int degree, double link_gbps, std::uint64_t seed,
                      double latency_ns = kDefaultHopLatencyNs);

// SiP-ML's physical ring (Appendix E): d wavelengths of B per server, ceil(d/2) to the clockwise
// neighbour i+1 and floor(d/2) to the counter-clockwise neighbour i-1, as parallel links.
GraphNetwork sipml_ring(int servers, int degree, double link_gbps, double latency_ns = kDefaultHopLatencyNs);

// Every ordered pair of servers linked directly at `link_gbps`: the potential links of a
// reconfigurable circuit fabric (TopoOpt-reconfig), whose circuits set their capacities.
GraphNetwork full_mesh(int servers, double link_gbps, double latency_ns = kDefaultHopLatencyNs);

// A direct-connect fabric from the directed server-to-server edges a TopologyFinder returns;
// every server must have <= degree out-links and <= degree in-links (else InputError).
GraphNetwork direct_connect(int servers, int degree, double link_gbps, const std::vector<std::pair<int, int>>& edges,
                            double latency_ns = kDefaultHopLatencyNs);

// True when every node reaches every other node along directed links.
bool strongly_connected(const GraphNetwork& net);

}  // namespace chorus::net
