#pragma once
// Maximum-weight matching on a general graph (Edmonds' Blossom algorithm), the step TopologyFinder
// repeats to build the model-parallel sub-topology (TopoOpt Algorithm 1, line 15). LEMON's
// MaxWeightedMatching does the work; this is the thin, typed entry point chorus uses.
#include <cstdint>
#include <utility>
#include <vector>

namespace chorus::topoopt {

struct WeightedPair {
  int u = 0;
  int v = 0;
  std::int64_t weight = 0;  // > 0; pairs of weight 0 are never worth matching and are ignored
};

// A set of vertex-disjoint pairs among vertices 0..n-1 with the largest total weight (not
// necessarily the most pairs). Each pair is returned as (min, max), the list sorted. Parallel
// entries for the same pair: the heaviest counts.
std::vector<std::pair<int, int>> max_weight_matching(int n, const std::vector<WeightedPair>& pairs);

}  // namespace chorus::topoopt
