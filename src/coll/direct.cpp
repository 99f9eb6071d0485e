// Direct algorithm on a fully-connected dimension of p NPUs (Themis Table 1):
// every NPU exchanges with all p-1 peers at once over its dedicated links, in one step.
// Reduce-scatter sends (p-1)/p of the resident data; all-gather sends the resident block
// to each of the p-1 peers; all-to-all sends (p-1)/p of the resident data.
#include "coll/stage_cost.h"

namespace chorus::coll {

StageCost direct_cost(Phase phase, int p, double bytes_before) {
  switch (phase) {
    case Phase::kReduceScatter:
      return {1, bytes_before * (p - 1) / p};
    case Phase::kAllGather:
      return {1, bytes_before * (p - 1)};
    case Phase::kAllToAll:
      return {1, bytes_before * (p - 1) / p};
    case Phase::kPointToPoint:
      break;  // not a collective's stage: stage_cost()
  }
  return {};
}

}  // namespace chorus::coll
