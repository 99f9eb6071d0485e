#include "topoopt/max_weight_matching.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <lemon/list_graph.h>
#include <lemon/matching.h>

namespace chorus::topoopt {

std::vector<std::pair<int, int>> max_weight_matching(int n, const std::vector<WeightedPair>& pairs) {
  std::map<std::pair<int, int>, std::int64_t> heaviest;
  for (const auto& p : pairs) {
    if (p.u < 0 || p.u >= n || p.v < 0 || p.v >= n || p.u == p.v)
      throw std::logic_error("max_weight_matching: a pair names a vertex outside the graph or a self loop");
    if (p.weight <= 0) continue;
    auto& w = heaviest[{std::min(p.u, p.v), std::max(p.u, p.v)}];
    w = std::max(w, p.weight);
  }
  if (heaviest.empty()) return {};
  lemon::ListGraph g;
  g.reserveNode(n);
  std::vector<lemon::ListGraph::Node> nodes;
  nodes.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) nodes.push_back(g.addNode());
  lemon::ListGraph::EdgeMap<std::int64_t> weight(g);
  for (const auto& [uv, w] : heaviest)
    weight[g.addEdge(nodes[static_cast<std::size_t>(uv.first)], nodes[static_cast<std::size_t>(uv.second)])] = w;
  lemon::MaxWeightedMatching<lemon::ListGraph, lemon::ListGraph::EdgeMap<std::int64_t>> matching(g, weight);
  matching.run();
  std::vector<std::pair<int, int>> result;
  for (lemon::ListGraph::EdgeIt e(g); e != lemon::INVALID; ++e)
    if (matching.matching(e)) {
      const int a = g.id(g.u(e)), b = g.id(g.v(e));
      result.emplace_back(std::min(a, b), std::max(a, b));
    }
  std::sort(result.begin(), result.end());
  return result;
}

}  // namespace chorus::topoopt
