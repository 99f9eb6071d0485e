// Halving-doubling on a switch dimension of p = 2^k NPUs (Themis Table 1; Thakur et al.).
// Reduce-scatter by recursive halving: log2(p) steps sending m/2, m/4, ..., m/p,
//   in total (p-1)/p * m.
// All-gather by recursive doubling: log2(p) steps sending m, 2m, ..., (p/2)m,
//   in total (p-1) * m for a resident block m.
#include <bit>

#include "coll/stage_cost.h"

namespace chorus::coll {

StageCost halving_doubling_cost(Phase phase, int p, double bytes_before) {
  const int steps = std::bit_width(static_cast<unsigned>(p)) - 1;  // log2(p), p a power of two
  switch (phase) {
    case Phase::kReduceScatter:
      return {steps, bytes_before * (p - 1) / p};
    case Phase::kAllGather:
      return {steps, bytes_before * (p - 1)};
    case Phase::kAllToAll:
      return pairwise_all_to_all_cost(p, bytes_before);
    case Phase::kPointToPoint:
      break;  // not a collective's stage: stage_cost()
  }
  return {};
}

}  // namespace chorus::coll
