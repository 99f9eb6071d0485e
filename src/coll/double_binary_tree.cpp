// Double binary tree all-reduce on a dimension of p NPUs (ASTRA-sim's doubleBinaryTree; Sanders
// et al.): two trees over the NPUs, each reducing half of the data towards its root and then
// broadcasting the result back; every NPU is an inner node of at most one tree. Each of the
// L = floor(log2 p) levels of a tree forwards the whole resident block once: the reduce half
// (charged as the reduce-scatter stage) takes L steps sending m bytes each, the broadcast half
// (the all-gather stage, whose resident block is m / p) L steps sending p x (m / p) each. An
// all-to-all has no tree form: it runs pairwise.
#include <algorithm>
#include <bit>

#include "coll/stage_cost.h"

namespace chorus::coll {

StageCost double_binary_tree_cost(Phase phase, int p, double bytes_before) {
  const int levels = std::max(1, static_cast<int>(std::bit_width(static_cast<unsigned>(p))) - 1);  // floor(log2 p)
  switch (phase) {
    case Phase::kReduceScatter:
      return {levels, bytes_before * levels};
    case Phase::kAllGather:
      return {levels, bytes_before * p * levels};
    case Phase::kAllToAll:
      return pairwise_all_to_all_cost(p, bytes_before);
    case Phase::kPointToPoint:
      break;  // not a collective's stage: stage_cost()
  }
  return {};
}

}  // namespace chorus::coll
