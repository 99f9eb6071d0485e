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

// The same ring with `steps` steps: 2(n-1) is an all-reduce, n-1 a reduce-scatter or all-gather
// of a `bytes` buffer. Returns the final barrier flow.
int ring_collective(const net::Router& router, const std::vector<int>& order, double bytes, int steps, double start_ns,
                    std::vector<Flow>& flows, const std::vector<int>& after = {});

// The same ring collective pipelined, as implementations stream it: one flow per ring edge
// carrying all its steps' bytes, steps x bytes/n, and completing `steps` step latencies after its
// start (the slowest edge's path latency per step: delay_ns tops up each flow's own path
// latency). While the flows' rates stay constant this ends exactly when the stepped form does
// (every step takes the slowest edge's chunk time plus latency); with n flows instead of
// 2n(n-1) it is what lets a DAG of many collectives on hundreds of servers run in seconds.
// Returns a barrier flow that completes with the last edge.
int ring_pipelined(const net::Router& router, const std::vector<int>& order, double bytes, int steps, double start_ns,
                   std::vector<Flow>& flows, const std::vector<int>& after = {});

// All-to-all of a `bytes` buffer per member: every member sends bytes/n to every other member,
// all flows at once (they share the links max-min fairly). Returns a barrier flow that completes
// with the last of them.
int all_to_all(const net::Router& router, const std::vector<int>& members, double bytes, double start_ns,
               std::vector<Flow>& flows, const std::vector<int>& after = {});

// How many flows the builders above append (barriers included), for room made before they run:
// a ring of n servers with `steps` steps, stepped or pipelined, and an all-to-all of n members.
std::size_t ring_collective_flows(std::size_t n, std::size_t steps);
std::size_t ring_pipelined_flows(std::size_t n, std::size_t steps);
std::size_t all_to_all_flows(std::size_t n);

// A zero-byte flow that completes when every flow of `after` has (a join).
int barrier(double start_ns, std::vector<Flow>& flows, const std::vector<int>& after);

// A point-to-point transfer as one flow on the routed path. Returns its index.
int point_to_point(const net::Router& router, int src, int dst, double bytes, double start_ns, std::vector<Flow>& flows,
                   const FlowAfter& after = {});

// Server x server bytes sent (flows with src and dst set), for a traffic heatmap.
std::vector<std::vector<double>> traffic_matrix(int servers, const std::vector<Flow>& flows);

// CSV: header "src,0,1,...", one row per source server.
void write_matrix_csv(std::ostream& out, const std::vector<std::vector<double>>& matrix);

}  // namespace chorus::sim::flow
