#pragma once
// Degraded and failed links of a graph fabric: a link at a fraction of its bandwidth, or
// down. Routes computed on the result (net::Router) go around links that are down.
#include <string>
#include <vector>

#include "net/graph/graph_network.h"

namespace chorus::net {

struct LinkFault {
  int from = 0;
  int to = 0;
  double bandwidth_fraction = 1.0;  // of the link's bandwidth, in [0, 1]; 0 = down
  std::string where;                // names the fault in errors ("file:line: links[0]")
};

// `net` with every link from -> to (parallel links too) at its fault's fraction of its bandwidth, or
// removed when the fraction is 0. InputError naming the fault's `where`: no link from -> to, a
// fraction outside [0, 1], or links down such that a server no longer reaches another.
GraphNetwork apply_link_faults(const GraphNetwork& net, const std::vector<LinkFault>& faults);

}  // namespace chorus::net
