#pragma once
// Fewest-hop routes between servers of a GraphNetwork (breadth-first search).
// Tie-break (deterministic): BFS expands nodes in FIFO order and each node's out-links in
// increasing link index; the first link that reaches a node becomes its parent. Among parallel
// links u->v the lowest index is therefore always used.
#include <string>
#include <vector>

#include "net/graph/graph_network.h"

namespace chorus::net {

using Path = std::vector<int>;  // link indices, from the source to the destination

class Router {
 public:
  explicit Router(const GraphNetwork& net);
  // Routes over the links l with usable[l] only (one entry per link of `net`; the link indices stay
  // those of `net`): the routes around links that are down for a while.
  Router(const GraphNetwork& net, const std::vector<bool>& usable);
  // Every server reaches every other.
  bool connects_servers() const;
  // Fewest-hop path src -> dst (both servers). Empty when src == dst.
  // Unreachable: chorus::InputError naming both servers and the network.
  Path shortest_path(int src, int dst) const;
  // Parent links of a BFS tree rooted at src (-1: unreached or the root); cached per source.
  const std::vector<int>& tree(int src) const;
  const GraphNetwork& network() const { return net_; }

 private:
  const GraphNetwork& net_;
  std::vector<std::vector<int>> out_;  // out-links per node, increasing index
  mutable std::vector<std::vector<int>> trees_;
};

// Paths for all ordered server pairs: result[src][dst].
std::vector<std::vector<Path>> all_pairs(const GraphNetwork& net);

// Sum of the links' latency along a path.
double path_latency_ns(const GraphNetwork& net, const Path& path);

}  // namespace chorus::net
