#pragma once
// TopPermutations (TopoOpt Sec. 4.1 and Appendix C, Algorithm 4): which d_k of an AllReduce
// group's candidate rings to build. Every start k0 in the candidate list proposes d_k
// candidates picked evenly from k0 on; the proposal that gives the most model-parallel bytes a
// direct link wins (the paper's metric: "the sum of MP transfer sizes with a direct link from
// AllReduce permutations"). Ties, common when the demand is spread evenly over the offsets or
// absent, go to the fewest MP byte-hops over the proposal's rings, then the fewest hops summed
// over all offsets, then the earliest start. chorus adds one proposal built greedily ring by
// ring with the same score, which wins only if strictly better: evenly spaced picks can all be
// poor graphs (on 128 servers every 8 evenly spaced generators are equal mod 16).
#include <vector>

#include "topoopt/traffic.h"

namespace chorus::topoopt {

struct PermutationChoice {
  std::vector<int> generators;  // d_k of them, in the order picked; repeats when d_k > candidates
  double satisfied_bytes = 0;   // MP bytes the chosen rings give a direct link
};

// `members`: the group's servers in label order (the ring of p links members[j] to
// members[(j + p) mod k]). `candidates`: its TotientPerms generators. `unsatisfied`: the MP
// transfers that have no direct link yet; only those between two members count. d_k >= 1 and
// candidates non-empty.
PermutationChoice top_permutations(const std::vector<int>& members, int dk, const std::vector<int>& candidates,
                                   const std::vector<MpTransfer>& unsatisfied);

}  // namespace chorus::topoopt
