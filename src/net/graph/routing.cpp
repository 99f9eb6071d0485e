#include "net/graph/routing.h"

#include <algorithm>
#include <deque>

#include <fmt/format.h>

#include "core/error.h"

namespace chorus::net {

Router::Router(const GraphNetwork& net)
    : net_(net), out_(static_cast<std::size_t>(net.nodes())), trees_(static_cast<std::size_t>(net.nodes())) {
  for (std::size_t i = 0; i < net.links.size(); ++i)
    out_[static_cast<std::size_t>(net.links[i].from)].push_back(static_cast<int>(i));
}

Router::Router(const GraphNetwork& net, const std::vector<bool>& usable)
    : net_(net), out_(static_cast<std::size_t>(net.nodes())), trees_(static_cast<std::size_t>(net.nodes())) {
  for (std::size_t i = 0; i < net.links.size(); ++i)
    if (i < usable.size() && usable[i])
      out_[static_cast<std::size_t>(net.links[i].from)].push_back(static_cast<int>(i));
}

bool Router::connects_servers() const {
  for (int s = 0; s < net_.servers; ++s) {
    const auto& parent = tree(s);
    for (int d = 0; d < net_.servers; ++d)
      if (d != s && parent[static_cast<std::size_t>(d)] < 0) return false;
  }
  return true;
}

const std::vector<int>& Router::tree(int src) const {
  auto& parent = trees_[static_cast<std::size_t>(src)];
  if (!parent.empty()) return parent;
  parent.assign(static_cast<std::size_t>(net_.nodes()), -1);
  std::vector<char> seen(static_cast<std::size_t>(net_.nodes()), 0);
  std::deque<int> queue{src};
  seen[static_cast<std::size_t>(src)] = 1;
  while (!queue.empty()) {
    const int u = queue.front();
    queue.pop_front();
    for (int li : out_[static_cast<std::size_t>(u)]) {
      const int v = net_.links[static_cast<std::size_t>(li)].to;
      if (seen[static_cast<std::size_t>(v)]) continue;
      seen[static_cast<std::size_t>(v)] = 1;
      parent[static_cast<std::size_t>(v)] = li;
      queue.push_back(v);
    }
  }
  return parent;
}

Path Router::shortest_path(int src, int dst) const {
  if (src < 0 || src >= net_.servers || dst < 0 || dst >= net_.servers)
    throw InputError(net_.name, fmt::format("route {} -> {}: servers are 0..{}", src, dst, net_.servers - 1));
  if (src == dst) return {};
  const auto& parent = tree(src);
  // Count the hops, then fill from the end: one allocation per path (millions of flows route).
  std::size_t hops = 0;
  for (int v = dst; v != src; ++hops) {
    const int li = parent[static_cast<std::size_t>(v)];
    if (li < 0) throw InputError(net_.name, fmt::format("server {} cannot reach server {}", src, dst));
    v = net_.links[static_cast<std::size_t>(li)].from;
  }
  Path path(hops);
  for (int v = dst; v != src;) {
    const int li = parent[static_cast<std::size_t>(v)];
    path[--hops] = li;
    v = net_.links[static_cast<std::size_t>(li)].from;
  }
  return path;
}

std::vector<std::vector<Path>> all_pairs(const GraphNetwork& net) {
  Router router(net);
  std::vector<std::vector<Path>> out(static_cast<std::size_t>(net.servers));
  for (int s = 0; s < net.servers; ++s)
    for (int d = 0; d < net.servers; ++d) out[static_cast<std::size_t>(s)].push_back(router.shortest_path(s, d));
  return out;
}

double path_latency_ns(const GraphNetwork& net, const Path& path) {
  double t = 0.0;
  for (int li : path) t += net.links[static_cast<std::size_t>(li)].latency_ns;
  return t;
}

}  // namespace chorus::net
