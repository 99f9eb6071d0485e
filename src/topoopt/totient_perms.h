#pragma once
// TotientPerms (TopoOpt, Sec. 4.1 and Appendix C, Algorithm 2): the ring-AllReduce
// permutations of a group of n servers that are "regular" rings, server j followed by server
// (j + p) mod n. Such a rule visits every server exactly once if and only if p generates the
// cyclic group Z_n, i.e. gcd(p, n) = 1 (Theorem 1), so the candidates are the phi(n) numbers
// p < n co-prime with n (Euler's totient); with `primes_only` just the primes among them (the
// paper's restriction for very large n, ~n / ln n candidates).
#include <vector>

namespace chorus::topoopt {

// The generators p in [1, n) with gcd(p, n) = 1, ascending. n = 1: none; n = 2: {1}.
// With primes_only: 1 and the primes among them (1 keeps the plain ring S_i -> S_{i+1}).
std::vector<int> totient_generators(int n, bool primes_only = false);

// The ring of generator p over the group `members` (the group's servers in label order): member
// j sends to member (j + p) mod k, k = members.size(). Returns the directed edges (from, to) as
// server ids, k of them (none for k < 2).
std::vector<std::pair<int, int>> ring_edges(const std::vector<int>& members, int p);

// The servers in the order the ring of generator p visits them, starting at members[0].
std::vector<int> ring_order(const std::vector<int>& members, int p);

}  // namespace chorus::topoopt
