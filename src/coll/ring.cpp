// Ring algorithm on a ring dimension of p NPUs (Themis Table 1; Chan et al.).
// Reduce-scatter: p-1 steps, each NPU forwards one 1/p block per step.
// All-gather:     p-1 steps, each NPU forwards one block of the resident size per step.
// All-to-all:     every block travels the shorter way round a bidirectional ring; an NPU
//                 originates or forwards m/p * sum_{d=1}^{p-1} min(d, p-d) bytes in floor(p/2) steps.
// All-to-all one way round (ASTRA-sim's ring): p(p-1)/2 steps, each forwarding one m/p block to
//                 the next NPU; (p-1)/2 x m bytes in total.
#include "coll/stage_cost.h"

namespace chorus::coll {

StageCost ring_cost(Phase phase, int p, double bytes_before) {
  switch (phase) {
    case Phase::kReduceScatter:
      return {p - 1, bytes_before * (p - 1) / p};
    case Phase::kAllGather:
      return {p - 1, bytes_before * (p - 1)};
    case Phase::kAllToAll: {
      double hops = 0;
      for (int d = 1; d < p; ++d) hops += (d < p - d) ? d : p - d;
      return {p / 2, bytes_before / p * hops};
    }
    case Phase::kPointToPoint:
      break;  // not a collective's stage: stage_cost()
  }
  return {};
}

StageCost ring_one_way_all_to_all_cost(int p, double bytes_before) {
  return {p * (p - 1) / 2, bytes_before * (p - 1) / 2};
}

}  // namespace chorus::coll
