#include "capture/host_network.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "syndicate/topology.h"

namespace chorus::capture {

net::Network host_network(int ranks, const std::string& backend, const std::string& field) {
  const auto t = syndicate::builtin_topology("host", ranks, field);
  for (const auto& ch : t.channels) {
    if (std::find(ch.backends.begin(), ch.backends.end(), backend) == ch.backends.end()) continue;
    net::Network n;
    n.name = fmt::format("host ({}, {} ranks)", backend, ranks);
    net::Dimension d;
    d.kind = net::DimKind::kSwitch;
    d.size = ranks;
    d.link_bandwidth_gbps = ch.bandwidth_gbps;
    d.latency_ns = ch.latency_ns;
    n.dims.push_back(d);
    return n;
  }
  throw InputError(field, fmt::format("the host model has no channel for backend '{}'", backend));
}

}  // namespace chorus::capture
