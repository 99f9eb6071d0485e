#pragma once
// Cost of one collective stage on one dimension, per NPU (Themis Sec. 4.4):
//   time = A_K + n_K * B_K,  A_K = steps * step_latency,  B_K = 1 / aggregate bandwidth.
// The algorithm per dimension follows Themis Table 1: ring -> ring, fully_connected ->
// direct, switch -> halving-doubling (all-to-all on a switch: pairwise exchange).
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

// Algorithm Table 1 assigns to a dimension, e.g. "halving_doubling".
std::string_view algorithm_name(const net::Dimension& dim, Phase phase);

StageCost stage_cost(const net::Dimension& dim, Phase phase, double bytes_before);

// Point to point (Phase::kPointToPoint): one step, the bytes once, at the bandwidth of the
// links between two NPUs of the dimension: a switch, all of an NPU's links (through the switch);
// fully connected, its share of the links to each peer (links_per_npu / (P - 1), at least one);
// a ring of P > 2, the links towards one neighbour (links_per_npu / 2, at least one).
double peer_bandwidth_gbps(const net::Dimension& dim);
// The bandwidth a stage of `phase` uses on `dim`: the aggregate for a collective's stages, the
// peer bandwidth for point to point.
double stage_bandwidth_gbps(const net::Dimension& dim, Phase phase);

// A_K: fixed delay of one stage (steps x step latency); independent of the size.
double fixed_delay_ns(const net::Dimension& dim, Phase phase);
// n_K x B_K: bandwidth time of one stage.
double bandwidth_time_ns(const net::Dimension& dim, Phase phase, double bytes_before);
// A_K + n_K x B_K.
double stage_time_ns(const net::Dimension& dim, Phase phase, double bytes_before);

}  // namespace chorus::coll
