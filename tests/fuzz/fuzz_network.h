#pragma once
// The small two-dimensional network (a ring of 4, fully connected pairs) the workload fuzz
// targets import their inputs onto.
#include "net/network.h"

inline const chorus::net::Network& fuzz_network() {
  static const chorus::net::Network network = [] {
    chorus::net::Network n;
    n.name = "fuzz";
    n.dims.push_back(chorus::net::Dimension{chorus::net::DimKind::kRing, 4, 100.0, 1, 500});
    n.dims.push_back(chorus::net::Dimension{chorus::net::DimKind::kFullyConnected, 2, 50.0, 1, 500});
    return n;
  }();
  return network;
}
