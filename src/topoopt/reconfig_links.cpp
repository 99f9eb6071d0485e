#include "topoopt/reconfig_links.h"

#include <cmath>
#include <map>
#include <queue>
#include <tuple>

#include <fmt/format.h>

#include "core/error.h"

namespace chorus::topoopt {

std::vector<std::pair<int, int>> reconfig_links(int servers, int degree, const std::vector<Demand>& demand,
                                                bool discount) {
  if (degree < 1) throw InputError("degree", fmt::format("every server needs at least 1 interface, got {}", degree));
  std::map<std::pair<int, int>, double> t;
  for (const auto& m : demand) {
    if (m.src < 0 || m.src >= servers || m.dst < 0 || m.dst >= servers || m.src == m.dst)
      throw InputError("demand", fmt::format("pair {} -> {} is not two servers of 0..{}", m.src, m.dst, servers - 1));
    if (m.bytes > 0) t[{m.src, m.dst}] += m.bytes;
  }
  // Highest demand first; ties to the smaller (src, dst). Entries of servers whose interfaces are
  // used up are dropped when they surface (lines 15-20), not searched for.
  using Entry = std::tuple<double, int, int>;
  auto worse = [](const Entry& a, const Entry& b) {
    if (std::get<0>(a) != std::get<0>(b)) return std::get<0>(a) < std::get<0>(b);
    return std::make_pair(std::get<1>(a), std::get<2>(a)) > std::make_pair(std::get<1>(b), std::get<2>(b));
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(worse)> heap(worse);
  for (const auto& [pair, bytes] : t) heap.emplace(bytes, pair.first, pair.second);
  std::vector<int> tx(static_cast<std::size_t>(servers), degree), rx(static_cast<std::size_t>(servers), degree);
  std::vector<std::pair<int, int>> links;
  while (!heap.empty()) {
    auto [bytes, u, v] = heap.top();
    heap.pop();
    if (tx[static_cast<std::size_t>(u)] == 0 || rx[static_cast<std::size_t>(v)] == 0) continue;
    links.emplace_back(u, v);
    --tx[static_cast<std::size_t>(u)];
    --rx[static_cast<std::size_t>(v)];
    heap.emplace(discount ? bytes / 2 : bytes, u, v);  // line 11: the next parallel link is worth half
  }
  return links;
}

double reconfig_utility(const std::vector<std::pair<int, int>>& links, const std::vector<Demand>& demand) {
  std::map<std::pair<int, int>, int> count;
  for (const auto& l : links) ++count[l];
  std::map<std::pair<int, int>, double> t;
  for (const auto& m : demand) t[{m.src, m.dst}] += m.bytes;
  double u = 0;
  for (const auto& [pair, l] : count) {
    auto it = t.find(pair);
    if (it != t.end()) u += it->second * (2.0 - std::pow(2.0, 1 - l));  // sum_{x=1..l} 2^-(x-1)
  }
  return u;
}

}  // namespace chorus::topoopt
