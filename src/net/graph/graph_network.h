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

struct GraphNetwork {
  std::string name;
  int servers = 0;
  int switches = 0;
  std::vector<GraphLink> links;

  int nodes() const { return servers + switches; }
  // Adds a link and returns its index.
  int add_link(int from, int to, double gbps, double latency_ns = kDefaultHopLatencyNs);
  // Out-degree / in-degree of a node (counting parallel links).
  int out_degree(int node) const;
  int in_degree(int node) const;
};

// Throws chorus::InputError naming `where` and the offending field (link index, endpoint, bandwidth).
void validate(const GraphNetwork& net, const std::string& where);

}  // namespace chorus::net
