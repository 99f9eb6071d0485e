#include "coll/stage_cost.h"

#include <algorithm>

#include "core/units.h"

namespace chorus::coll {

net::Algorithm stage_algorithm(const net::Dimension& dim, Phase phase) {
  const auto chosen = phase == Phase::kAllToAll ? dim.all_to_all_algorithm : dim.algorithm;
  if (chosen != net::Algorithm::kTable1) return chosen;
  switch (dim.kind) {
    case net::DimKind::kRing:
      return net::Algorithm::kRing;
    case net::DimKind::kFullyConnected:
      return net::Algorithm::kDirect;
    case net::DimKind::kSwitch:
      return (dim.size & (dim.size - 1)) == 0 ? net::Algorithm::kHalvingDoubling : net::Algorithm::kRing;
  }
  return net::Algorithm::kRing;
}

int messages_at_once(net::Algorithm algorithm, int p) { return algorithm == net::Algorithm::kDirect ? p - 1 : 1; }

std::string_view algorithm_name(const net::Dimension& dim, Phase phase) {
  const auto algorithm = stage_algorithm(dim, phase);
  if (phase == Phase::kAllToAll &&
      (algorithm == net::Algorithm::kHalvingDoubling || algorithm == net::Algorithm::kDoubleBinaryTree))
    return "pairwise";
  return net::to_string(algorithm);
}

double peer_bandwidth_gbps(const net::Dimension& dim) {
  int links = dim.links_per_npu;
  if (dim.kind == net::DimKind::kFullyConnected && dim.size > 2) links /= dim.size - 1;
  if (dim.kind == net::DimKind::kRing && dim.size > 2) links /= 2;
  return dim.link_bandwidth_gbps * std::max(links, 1);
}

double stage_bandwidth_gbps(const net::Dimension& dim, Phase phase) {
  if (phase == Phase::kPointToPoint) return peer_bandwidth_gbps(dim);
  // ASTRA-sim's meaning: each message sent at once has the link bandwidth, and its reduction the
  // local memory bandwidth, to itself.
  const int at_once = dim.per_message_bandwidth ? messages_at_once(stage_algorithm(dim, phase), dim.size) : 1;
  const double network = dim.per_message_bandwidth ? dim.link_bandwidth_gbps * at_once : dim.aggregate_bandwidth_gbps();
  if (phase != Phase::kReduceScatter || !(dim.reduce_memory_GBps > 0)) return network;
  // Per byte sent: 1 / network + 3 / memory seconds, both in bits per second here.
  // ASTRA-sim reduces halving-doubling's messages after the first only (log2 P - 1 of them: the
  // first, half the data, is charged no memory time): (P-2)/2P of the data of (P-1)/P sent.
  const int p = dim.size;
  const double reduced = dim.per_message_bandwidth && stage_algorithm(dim, phase) == net::Algorithm::kHalvingDoubling
                             ? (p - 2.0) / (2.0 * (p - 1.0))
                             : 1.0;
  if (!(reduced > 0)) return network;
  const double memory_gbps = 8.0 * dim.reduce_memory_GBps * at_once / (3.0 * reduced);
  return 1.0 / (1.0 / network + 1.0 / memory_gbps);
}

StageCost stage_cost(const net::Dimension& dim, Phase phase, double bytes_before) {
  if (phase == Phase::kPointToPoint) return {1, bytes_before};
  switch (stage_algorithm(dim, phase)) {
    case net::Algorithm::kTable1:
    case net::Algorithm::kRing:
      if (phase == Phase::kAllToAll && dim.per_message_bandwidth)
        return ring_one_way_all_to_all_cost(dim.size, bytes_before);
      return ring_cost(phase, dim.size, bytes_before);
    case net::Algorithm::kDirect:
      return direct_cost(phase, dim.size, bytes_before);
    case net::Algorithm::kHalvingDoubling:
      return halving_doubling_cost(phase, dim.size, bytes_before);
    case net::Algorithm::kDoubleBinaryTree:
      return double_binary_tree_cost(phase, dim.size, bytes_before);
  }
  return {};
}

int latency_hops(const net::Dimension& dim, Phase phase, int steps) {
  // ASTRA-sim's meaning on a ring: a message to a peer k positions away pays k hops of latency
  // (the shorter way round); steps that send at once wait for their farthest message.
  if (!dim.per_message_bandwidth || dim.kind != net::DimKind::kRing || phase == Phase::kPointToPoint) return steps;
  const int p = dim.size;
  switch (stage_algorithm(dim, phase)) {
    case net::Algorithm::kDirect:
      return steps * (p / 2);
    case net::Algorithm::kHalvingDoubling:
      if (phase != Phase::kAllToAll) return p - 1;  // distances 1, 2, 4, ..., p/2
      [[fallthrough]];
    case net::Algorithm::kDoubleBinaryTree:
      if (phase == Phase::kAllToAll) {  // pairwise: peers 1 .. p-1 away
        int hops = 0;
        for (int d = 1; d < p; ++d) hops += std::min(d, p - d);
        return hops;
      }
      return steps;
    case net::Algorithm::kTable1:
    case net::Algorithm::kRing:
      return steps;
  }
  return steps;
}

double fixed_delay_ns(const net::Dimension& dim, Phase phase) {
  const int steps = stage_cost(dim, phase, 0).steps;
  const double endpoint = phase == Phase::kPointToPoint ? 0 : dim.endpoint_delay_ns;
  return steps * endpoint + latency_hops(dim, phase, steps) * dim.latency_ns;
}

double bandwidth_time_ns(const net::Dimension& dim, Phase phase, double bytes_before) {
  return transfer_time_ns(stage_cost(dim, phase, bytes_before).bytes_sent, stage_bandwidth_gbps(dim, phase));
}

double stage_time_ns(const net::Dimension& dim, Phase phase, double bytes_before) {
  return fixed_delay_ns(dim, phase) + bandwidth_time_ns(dim, phase, bytes_before);
}

}  // namespace chorus::coll
