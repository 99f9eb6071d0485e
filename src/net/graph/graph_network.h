#pragma once
// A network as a directed multigraph (TopoOpt, NSDI'23, Sec. 5.1): nodes 0..servers-1 are servers,
// nodes servers..nodes()-1 are switches. Parallel links are allowed: two links u->v carry twice the
// capacity of one. The flow-level model (src/sim/flow) shares these links among flows.
#include <string>
#include <vector>

namespace chorus::net {

// The paper's per-hop latency (1 us).
inline constexpr double kDefaultHopLatencyNs = 1000.0;

struct GraphLink {
  int from = 0;
  int to = 0;
  double gbps = 0.0;
  double latency_ns = kDefaultHopLatencyNs;
};

// The rings a group of servers runs its ring collectives on, when the fabric was built for them
// (TopoOpt's AllReduce sub-topology: one ring per generator; SiP-ML: both ring directions). An
// all-reduce over exactly these servers is split equally over the rings.
struct GroupRings {
  std::vector<int> servers;              // ascending
  std::vector<std::vector<int>> orders;  // each a permutation of `servers`
};

struct GraphNetwork {
  std::string name;
  int servers = 0;
  int switches = 0;
  std::vector<GraphLink> links;
  std::vector<GroupRings> rings;  // optional

  int nodes() const { return servers + switches; }
  // Adds a link and returns its index.
  int add_link(int from, int to, double gbps, double latency_ns = kDefaultHopLatencyNs);
  // Out-degree / in-degree of a node (counting parallel links).
  int out_degree(int node) const;
  int in_degree(int node) const;
};

// The same network with every bundle of parallel links u->v of equal latency replaced by one link
// of their summed bandwidth (at the first one's position). For the flow-level model this lets
// flows use a bundle's whole capacity, as if striped over its links, where single-path routing
// would otherwise keep to the bundle's lowest-index link.
GraphNetwork merge_parallel_links(const GraphNetwork& net);

// Throws chorus::InputError naming `where` and the offending field (link index, endpoint, bandwidth;
// rings[i]: servers out of range, not ascending, or an order that is not a permutation of them).
void validate(const GraphNetwork& net, const std::string& where);

}  // namespace chorus::net
