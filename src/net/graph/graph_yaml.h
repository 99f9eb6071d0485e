#pragma once
// The fabric file format (docs/graph-networks.md):
//   fabric:
//     name: ring4
//     servers: 4
//     switches: 0          # optional, default 0
//     degree: 1            # optional: every server <= degree out- and in-links
//     link_gbps: 100       # bandwidth of links given as [from, to]
//     link_latency_us: 1   # optional, default 1 (the paper's per-hop latency)
//     links:
//       - [0, 1]
//       - {from: 1, to: 2, gbps: 50, latency_us: 2}   # gbps / latency_us optional
// Errors name file:line and the field; unknown keys are rejected.
#include <string>

#include "net/graph/graph_network.h"

namespace chorus::net {

GraphNetwork parse_fabric_yaml(const std::string& text, const std::string& source_name);
GraphNetwork load_fabric_yaml(const std::string& path);
// True when `path` is a readable YAML file whose top level is a map with the key 'fabric' (so a
// --topology argument can be a dimension network or a fabric).
bool is_fabric_file(const std::string& path);
// Links equal to the defaults (the first link's bandwidth and latency) are written as [from, to].
std::string write_fabric_yaml(const GraphNetwork& net);

}  // namespace chorus::net
