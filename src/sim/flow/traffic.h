#pragma once
// Expanding collectives into flows for the flow-level model (src/sim/flow/flow_model.h).
#include <iosfwd>
#include <vector>

#include "net/graph/routing.h"
#include "sim/flow/flow_model.h"

namespace chorus::sim::flow {

// Ring all-reduce of `bytes` over `order` (servers, in ring order): 2(n-1) steps; in each step
// every server sends bytes/n to its successor along the routed path. A step starts when every
// flow of the previous step has completed (last byte + latency): a zero-byte barrier flow joins
// each step, so dependencies stay O(n) per step. `after` = flows the first step waits for.
// Appends to `flows`; returns the index of the final barrier flow (its finish = the collective's).
int ring_allreduce(const net::Router& router, const std::vector<int>& order, double bytes, double start_ns,
                   std::vector<Flow>& flows, const std::vector<int>& after = {});

// A point-to-point transfer as one flow on the routed path. Returns its index.
int point_to_point(const net::Router& router, int src, int dst, double bytes, double start_ns,
                   std::vector<Flow>& flows, const std::vector<int>& after = {});

// Server x server bytes sent (flows with src and dst set), for a traffic heatmap.
std::vector<std::vector<double>> traffic_matrix(int servers, const std::vector<Flow>& flows);

// CSV: header "src,0,1,...", one row per source server.
void write_matrix_csv(std::ostream& out, const std::vector<std::vector<double>>& matrix);

}  // namespace chorus::sim::flow
