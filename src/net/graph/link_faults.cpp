#include "net/graph/link_faults.h"

#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "net/graph/routing.h"

namespace chorus::net {

GraphNetwork apply_link_faults(const GraphNetwork& net, const std::vector<LinkFault>& faults) {
  if (faults.empty()) return net;
  std::vector<double> fraction(net.links.size(), 1.0);
  for (const auto& f : faults) {
    if (!(f.bandwidth_fraction >= 0 && f.bandwidth_fraction <= 1))
      throw InputError(f.where,
                       fmt::format("bandwidth fraction must be in [0, 1] (0: down), got {}", f.bandwidth_fraction));
    bool found = false;
    for (std::size_t l = 0; l < net.links.size(); ++l)
      if (net.links[l].from == f.from && net.links[l].to == f.to) {
        fraction[l] *= f.bandwidth_fraction;
        found = true;
      }
    if (!found) throw InputError(f.where, fmt::format("fabric '{}' has no link {} -> {}", net.name, f.from, f.to));
  }
  GraphNetwork out = net;
  out.links.clear();
  for (std::size_t l = 0; l < net.links.size(); ++l)
    if (fraction[l] > 0)
      out.links.push_back(
          {net.links[l].from, net.links[l].to, net.links[l].gbps * fraction[l], net.links[l].latency_ns});
  // Every server must still reach every other one (single-path routing needs one path).
  const Router router(out);
  for (int s = 0; s < out.servers; ++s) {
    const auto& parent = router.tree(s);
    for (int d = 0; d < out.servers; ++d)
      if (d != s && parent[static_cast<std::size_t>(d)] < 0) {
        std::string down;
        for (const auto& f : faults)
          if (f.bandwidth_fraction == 0) down += fmt::format("{}{} -> {}", down.empty() ? "" : ", ", f.from, f.to);
        throw InputError(
            faults.front().where,
            fmt::format("with the links down ({}) server {} cannot reach server {}: the fabric is disconnected", down,
                        s, d));
      }
  }
  return out;
}

}  // namespace chorus::net
