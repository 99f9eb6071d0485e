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
//   same in Gb/s (10^9 bits/s: 200 = 25 GB/s), is still read; exactly one of the two.
// ASTRA-sim format (bandwidth in GB/s per NPU per dimension, latency in ns):
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
