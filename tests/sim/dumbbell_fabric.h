#pragma once
// The fabric of the shared-fabric tests (sim/test_shared_fabric.cpp, sim/test_jobs_workloads.cpp).
#include <utility>

#include "net/graph/graph_network.h"

namespace chorus::test_support {

// A dumbbell: servers 0, 1 under switch 4 (A), servers 2, 3 under switch 5 (B), every link 8 Gb/s
// (1 byte/ns) both ways, no latency; 4 -> 5 (link 8) and 5 -> 4 (link 9) are the only ways
// between the two halves.
inline net::GraphNetwork dumbbell() {
  net::GraphNetwork g;
  g.name = "dumbbell";
  g.servers = 4;
  g.switches = 2;
  for (auto [s, sw] : {std::pair{0, 4}, {1, 4}, {2, 5}, {3, 5}}) {
    g.add_link(s, sw, 8.0, 0.0);
    g.add_link(sw, s, 8.0, 0.0);
  }
  g.add_link(4, 5, 8.0, 0.0);
  g.add_link(5, 4, 8.0, 0.0);
  return g;
}

}  // namespace chorus::test_support
