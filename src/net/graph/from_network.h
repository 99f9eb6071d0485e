#pragma once
// A multi-dimensional network (Themis Sec. 2.3, net::Network) as a graph fabric, so that the
// flow-level model (`chorus sim jobs`) runs on the Themis presets. NPU i is
// server i (dimension 1 fastest, as everywhere in chorus). Per dimension K, every group of NPUs
// that differ only along K (net::npu_groups) gets, with B = K's aggregate bandwidth per NPU
// (link bandwidth x links) and L = K's step latency:
//   - switch: one switch node; NPU -> switch and switch -> NPU at B, each L/2 (a path is L);
//   - ring: P = 2: one link each way at B; P > 2: links to the next and the previous member at
//     B/2 each (the NPU's links split over both directions), latency L, and the group's two ring
//     orders (net::GroupRings), so that an all-reduce over exactly the group runs half its bytes
//     each way, as the analytical ring does with the whole B;
//   - fully connected: a link to every other member at B / (P - 1), latency L.
// Where the two models agree and where not is in docs/shared-fabric.md.
#include <string>

#include "net/graph/graph_network.h"
#include "net/network.h"

namespace chorus::net {

// InputError naming `where` for an invalid network or one of more than 65,536 NPUs.
GraphNetwork graph_of(const Network& network, const std::string& where);

}  // namespace chorus::net
