#pragma once
// A SYNDICATE topology from a YAML file (format: docs/syndicate.md):
//   name: my-cluster
//   dims: [{name: node, size: 8}, {name: cluster, size: 16}]
//   channels:
//     - {name: nvswitch, dim: 0, bandwidth_gbps: 1200, latency_ns: 2000, backends: [nccl]}
//   paths:
//     - {name: fast, channels: [nvswitch, rdma]}
//   costs:      # optional: the time of whole comm-op options, replacing the analytical model
//     - {kind: all_reduce, algorithm: ring, path: fast, latency_ns: 2.5e6, bandwidth_gbps: 0}
//   compute: {peak_tflops: 15, memory_bandwidth_gbs: 900}   # optional
// Every error names file:line and the field.
#include <string>
#include <vector>

#include "syndicate/topology.h"

namespace chorus::syndicate {

Topology parse_topology_yaml(const std::string& text, const std::string& source_name);
Topology read_topology_yaml(const std::string& path);
// The YAML text of `t` (parse_topology_yaml reads it back equal), after `comment` lines as '# '.
std::string topology_yaml(const Topology& t, const std::vector<std::string>& comment = {});

}  // namespace chorus::syndicate
