#pragma once
// Flow-level network model: flows share the links of a GraphNetwork max-min fairly. Rates come
// from progressive filling (water-filling) and are recomputed at every flow start and every
// flow's last byte; between those events rates are constant (event-driven, exact up to floating
// point). A flow's completion is the time its last byte is sent plus the sum of the latencies of
// the links on its path (propagation is added once, after the transfer: a store-and-forward-free,
// pipelined model). Rules and sources: docs/graph-networks.md.
#include <cstdint>
#include <vector>

#include "net/graph/graph_network.h"
#include "net/graph/routing.h"

namespace chorus::sim::flow {

struct Flow {
  net::Path path;          // link indices; empty = a local/barrier flow that takes no time
  double bytes = 0.0;
  double start_ns = 0.0;   // earliest start
  std::vector<int> after;  // indices of flows that must have completed (incl. latency) first
  int src = -1;            // servers, for the traffic matrix (-1: none)
  int dst = -1;
};

struct FlowResult {
  std::vector<double> start_ns;      // per flow: actual start (max of start_ns and `after`)
  std::vector<double> send_done_ns;  // per flow: last byte sent
  std::vector<double> finish_ns;     // per flow: send_done + path latency
  std::vector<double> link_bytes;    // per link: bytes carried
  std::vector<double> link_busy_ns;  // per link: time with at least one active flow
  std::int64_t reallocations = 0;    // rate recomputations (progressive filling runs)
  std::int64_t events = 0;           // distinct event times processed
  double makespan_ns = 0.0;          // max finish
};

// Simulates all flows. Throws chorus::InputError for a link index out of range, negative bytes,
// an `after` index out of range or a dependency cycle (flows that can never start).
FlowResult simulate_flows(const net::GraphNetwork& net, const std::vector<Flow>& flows);

// Max-min fair rates (bytes/ns) of flows sharing links of capacity `capacity` (bytes/ns), by
// progressive filling. Exposed for tests. paths[i] must be non-empty.
std::vector<double> max_min_rates(const std::vector<double>& capacity, const std::vector<const net::Path*>& paths);

}  // namespace chorus::sim::flow
