#include "topoopt/coin_change_mod.h"

#include <algorithm>
#include <fmt/format.h>

#include "core/error.h"

namespace chorus::topoopt {

CoinRoutes coin_change_mod(int n, std::vector<int> coins) {
  if (n < 1) throw InputError("coins", fmt::format("a group has at least 1 server, got {}", n));
  std::sort(coins.begin(), coins.end());
  coins.erase(std::unique(coins.begin(), coins.end()), coins.end());
  for (int c : coins)
    if (c < 1 || c >= n) throw InputError("coins", fmt::format("coin {} is not a ring generator of {} servers (1..{})", c, n, n - 1));
  CoinRoutes r;
  r.n = n;
  r.coins = coins;
  r.hops.assign(static_cast<std::size_t>(n), -1);
  std::vector<int> last(static_cast<std::size_t>(n), 0);  // the last coin of the best route to t
  r.hops[0] = 0;
  // Round h extends every distance reached in h - 1 hops by one coin (Algorithm 3's relaxation,
  // done frontier by frontier); the smallest coin wins ties, so routes are deterministic.
  std::vector<int> frontier = {0};
  for (int h = 1; !frontier.empty(); ++h) {
    std::vector<int> next;
    for (int t : frontier)
      for (int c : coins) {
        const int u = (t + c) % n;
        if (r.hops[static_cast<std::size_t>(u)] >= 0) continue;
        r.hops[static_cast<std::size_t>(u)] = h;
        last[static_cast<std::size_t>(u)] = c;
        next.push_back(u);
      }
    std::sort(next.begin(), next.end());
    frontier = std::move(next);
  }
  r.route.assign(static_cast<std::size_t>(n), {});
  for (int t = 1; t < n; ++t) {
    if (r.hops[static_cast<std::size_t>(t)] < 0) continue;
    auto& seq = r.route[static_cast<std::size_t>(t)];
    for (int u = t; u != 0; u = ((u - last[static_cast<std::size_t>(u)]) % n + n) % n) seq.push_back(last[static_cast<std::size_t>(u)]);
    std::reverse(seq.begin(), seq.end());
  }
  return r;
}

std::vector<int> CoinRoutes::path(int from, int to) const {
  if (from < 0 || from >= n || to < 0 || to >= n)
    throw InputError("route", fmt::format("servers {} -> {} are not in 0..{}", from, to, n - 1));
  const int t = ((to - from) % n + n) % n;
  if (hops[static_cast<std::size_t>(t)] < 0)
    throw InputError("route", fmt::format("no route from {} to {}: the coins {} do not reach distance {}", from, to,
                                          fmt::join(coins, ","), t));
  std::vector<int> out;
  int at = from;
  for (int c : route[static_cast<std::size_t>(t)]) out.push_back(at = (at + c) % n);
  return out;
}

}  // namespace chorus::topoopt
