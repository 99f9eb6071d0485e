#include "topoopt/totient_perms.h"

#include <fmt/format.h>
#include <numeric>

#include "core/error.h"

namespace chorus::topoopt {

namespace {
bool is_prime(int p) {
  if (p < 2) return false;
  for (int q = 2; q * q <= p; ++q)
    if (p % q == 0) return false;
  return true;
}
}  // namespace

std::vector<int> totient_generators(int n, bool primes_only) {
  if (n < 1) throw InputError("n", fmt::format("a group has at least 1 server, got {}", n));
  std::vector<int> out;
  for (int p = 1; p < n; ++p)
    if (std::gcd(p, n) == 1 && (!primes_only || p == 1 || is_prime(p))) out.push_back(p);
  return out;
}

std::vector<std::pair<int, int>> ring_edges(const std::vector<int>& members, int p) {
  const int k = static_cast<int>(members.size());
  std::vector<std::pair<int, int>> edges;
  if (k < 2) return edges;
  if (p < 1 || p >= k || std::gcd(p, k) != 1)
    throw InputError(
        "ring",
        fmt::format("{} does not generate a ring of {} servers (needs 1 <= p < {} and gcd(p, {}) = 1)", p, k, k, k));
  for (int j = 0; j < k; ++j)
    edges.emplace_back(members[static_cast<std::size_t>(j)], members[static_cast<std::size_t>((j + p) % k)]);
  return edges;
}

std::vector<int> ring_order(const std::vector<int>& members, int p) {
  const int k = static_cast<int>(members.size());
  std::vector<int> order;
  if (k == 0) return order;
  if (k > 1 && (p < 1 || p >= k || std::gcd(p, k) != 1))
    throw InputError("ring", fmt::format("{} does not generate a ring of {} servers", p, k));
  for (int j = 0, at = 0; j < k; ++j, at = (at + p) % k) order.push_back(members[static_cast<std::size_t>(at)]);
  return order;
}

}  // namespace chorus::topoopt
