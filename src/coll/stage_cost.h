#pragma once
// Cost of one collective stage on one dimension, per NPU (Themis Sec. 4.4):
//   time = A_K + n_K * B_K,  A_K = steps * step_latency,  B_K = 1 / aggregate bandwidth.
// The algorithm per dimension follows Themis Table 1: ring -> ring, fully_connected ->
// direct, switch -> halving-doubling (all-to-all on a switch: pairwise exchange), unless the
// dimension names one (net::Dimension::algorithm: an ASTRA-sim system file, `algorithm:`).
#include <string_view>

#include "coll/collective.h"
#include "net/dimension.h"

namespace chorus::coll {

struct StageCost {
  int steps = 0;          // algorithm steps, each paying the dimension's step latency
  double bytes_sent = 0;  // n: bytes each NPU sends on this dimension
};

// The per-algorithm formulas, one file each (ring.cpp, direct.cpp, halving_doubling.cpp,
// pairwise.cpp). `bytes_before` is the data resident on each NPU before the stage; `p` the
// number of NPUs on the dimension.
StageCost ring_cost(Phase phase, int p, double bytes_before);
StageCost direct_cost(Phase phase, int p, double bytes_before);
StageCost halving_doubling_cost(Phase phase, int p, double bytes_before);
StageCost pairwise_all_to_all_cost(int p, double bytes_before);
StageCost double_binary_tree_cost(Phase phase, int p, double bytes_before);
StageCost ring_one_way_all_to_all_cost(int p, double bytes_before);

// The algorithm `dim` runs for a stage of `phase`: its explicit choice, else Table 1's (a switch
// whose size is not a power of two: ring). Never kTable1.
net::Algorithm stage_algorithm(const net::Dimension& dim, Phase phase);
// Messages one NPU sends at once in a step of `algorithm` on `p` NPUs: direct p - 1, else 1.
int messages_at_once(net::Algorithm algorithm, int p);

// Algorithm Table 1 assigns to a dimension, e.g. "halving_doubling".
std::string_view algorithm_name(const net::Dimension& dim, Phase phase);

StageCost stage_cost(const net::Dimension& dim, Phase phase, double bytes_before);

// Point to point (Phase::kPointToPoint): one step, the bytes once, at the bandwidth of the
// links between two NPUs of the dimension: a switch, all of an NPU's links (through the switch);
// fully connected, its share of the links to each peer (links_per_npu / (P - 1), at least one);
// a ring of P > 2, the links towards one neighbour (links_per_npu / 2, at least one).
double peer_bandwidth_gbps(const net::Dimension& dim);
// The bandwidth a stage of `phase` uses on `dim`: the aggregate for a collective's stages, the
// peer bandwidth for point to point. With per_message_bandwidth (ASTRA-sim's meaning), a
// collective's stage gets the link bandwidth once per message it sends at once; with
// reduce_memory_GBps, a reduce-scatter stage's bandwidth also pays the reduction's local-memory
// traffic (3 bytes moved per byte sent): 1 / (1 / network + 3 / memory).
double stage_bandwidth_gbps(const net::Dimension& dim, Phase phase);

// Hops of latency a stage pays in all: one per step, but with per_message_bandwidth (ASTRA-sim's
// meaning) on a ring, the distance to each step's farthest peer (direct: p/2 per step,
// halving-doubling: 1 + 2 + ... + p/2).
int latency_hops(const net::Dimension& dim, Phase phase, int steps);
// A_K: fixed delay of one stage (steps x (endpoint delay) + hops x latency); independent of the size.
double fixed_delay_ns(const net::Dimension& dim, Phase phase);
// n_K x B_K: bandwidth time of one stage.
double bandwidth_time_ns(const net::Dimension& dim, Phase phase, double bytes_before);
// A_K + n_K x B_K.
double stage_time_ns(const net::Dimension& dim, Phase phase, double bytes_before);

}  // namespace chorus::coll
