#pragma once
// `--topology host` for a capture: this host as the network a capture's collectives run on — one
// dimension of the capture's ranks, with the bandwidth and latency of the channel of the backend
// the capture ran on in SYNDICATE's measured model of this host (syndicate/topology.h, `host`;
// docs/syndicate.md).
#include <string>

#include "net/network.h"

namespace chorus::capture {

// InputError naming `field` when the backend has no channel in the host model.
net::Network host_network(int ranks, const std::string& backend, const std::string& field);

}  // namespace chorus::capture
