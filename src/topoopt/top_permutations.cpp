#include "topoopt/top_permutations.h"

#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "topoopt/coin_change_mod.h"

namespace chorus::topoopt {
namespace {

// How good a set of rings is: the MP bytes it gives a direct link (the paper's metric), then the
// fewest MP byte-hops over its rings, then the fewest hops summed over all offsets. Larger wins.
using Score = std::tuple<double, double, long long>;

Score score(int k, const std::set<int>& rings, const std::vector<double>& at_offset) {
  double satisfied = 0;
  for (int p : rings) satisfied += at_offset[static_cast<std::size_t>(p)];  // ascending: one order for equal sets
  const auto hops = coin_change_hops(k, std::vector<int>(rings.begin(), rings.end()));
  double byte_hops = 0;
  long long total = 0;
  for (int t = 1; t < k; ++t) {
    byte_hops += at_offset[static_cast<std::size_t>(t)] * hops[static_cast<std::size_t>(t)];
    total += hops[static_cast<std::size_t>(t)];
  }
  return {satisfied, -byte_hops, -total};
}

}  // namespace

PermutationChoice top_permutations(const std::vector<int>& members, int dk, const std::vector<int>& candidates,
                                   const std::vector<MpTransfer>& unsatisfied) {
  if (dk < 1 || candidates.empty()) throw std::logic_error("top_permutations: needs d_k >= 1 and a candidate");
  const int k = static_cast<int>(members.size());
  std::unordered_map<int, int> position;
  for (int j = 0; j < k; ++j) position[members[static_cast<std::size_t>(j)]] = j;
  // A transfer src -> dst between members is served by exactly one ring: the one whose generator
  // is dst's position minus src's, mod k. So a proposal's satisfied bytes are a sum over its
  // distinct generators of the bytes waiting at that offset.
  std::vector<double> at_offset(static_cast<std::size_t>(k), 0.0);
  for (const auto& m : unsatisfied) {
    const auto s = position.find(m.src), d = position.find(m.dst);
    if (s == position.end() || d == position.end()) continue;
    at_offset[static_cast<std::size_t>(((d->second - s->second) % k + k) % k)] += m.bytes;
  }
  const auto c = candidates.size();
  PermutationChoice best;
  Score best_score{-1.0, 0.0, 0};
  auto consider = [&](std::vector<int> generators) {
    const std::set<int> rings(generators.begin(), generators.end());
    const auto s = score(k, rings, at_offset);
    if (s > best_score) {
      best_score = s;
      best.generators = std::move(generators);
      best.satisfied_bytes = std::get<0>(s);
    }
  };
  // Algorithm 4: from every start k0, d_k candidates picked evenly.
  for (std::size_t k0 = 0; k0 < c; ++k0) {
    std::vector<int> proposal;
    for (int j = 0; j < dk; ++j)
      proposal.push_back(candidates[(k0 + static_cast<std::size_t>(j) * c / static_cast<std::size_t>(dk)) % c]);
    consider(std::move(proposal));
  }
  // Added by chorus: one proposal built greedily, ring by ring, by the same score. It replaces
  // the paper's choice only if strictly better (docs/topoopt.md says when that happens).
  std::vector<int> greedy;
  std::set<int> taken;
  while (static_cast<int>(greedy.size()) < dk && taken.size() < c) {
    int pick = -1;
    Score pick_score{-1.0, 0.0, 0};
    for (int p : candidates) {
      if (taken.count(p)) continue;
      auto with = taken;
      with.insert(p);
      const auto s = score(k, with, at_offset);
      if (s > pick_score) pick_score = s, pick = p;
    }
    greedy.push_back(pick);
    taken.insert(pick);
  }
  for (std::size_t j = 0; static_cast<int>(greedy.size()) < dk; ++j)
    greedy.push_back(candidates[j % c]);  // parallel rings
  consider(std::move(greedy));
  return best;
}

}  // namespace chorus::topoopt
