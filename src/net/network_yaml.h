#pragma once
// Loading networks from YAML: chorus's own format and ASTRA-sim's network YAML.
#include <string>

#include "net/network.h"

namespace chorus::net {

// chorus format:
//   name: my-net
//   dims:
//     - {kind: switch, size: 16, link_bandwidth_GBps: 25, links_per_npu: 4, latency_ns: 700}
//   link_bandwidth_GBps is GB/s (10^9 bytes/s) per link; the older key link_bandwidth_gbps, the
//   same in Gb/s (10^9 bits/s: 200 = 25 GB/s), is still read; exactly one of the two. A stage
//   runs at links_per_npu x the link bandwidth, Themis's meaning. Optional per dimension:
//   algorithm (ring, direct, halving_doubling, double_binary_tree; default Themis Table 1's).
// ASTRA-sim format, read with ASTRA-sim's meaning (its analytical backend): bandwidth in GB/s
// with 1 GB = 2^30 bytes, the bandwidth of every message (a fully connected NPU has P-1 links,
// direct uses them at once); latency in ns per hop, a switch's messages taking two hops:
//   topology: [Ring, Switch]
//   npus_count: [8, 4]
//   bandwidth: [50.0, 25.0]
//   latency: [500.0, 500.0]
// Unknown or misspelt keys, missing fields and bad values throw InputError naming
// "file:line" and the field. `source_name` is used in messages.
Network parse_network_yaml(const std::string& text, const std::string& source_name);
Network load_network_file(const std::string& path);

// A preset name (see presets.h) or a path to a YAML file.
Network load_network(const std::string& name_or_path);

}  // namespace chorus::net
