#include "eval/topoopt_fabrics.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/suggest.h"
#include "net/graph/fabrics.h"
#include "topoopt/cost_model.h"
#include "topoopt/reconfig_links.h"
#include "topoopt/topology_finder.h"

namespace chorus::eval {
namespace {

// A fabric needs TopologyFinder's links and rings, not its routes of the MP transfers (a million
// paths for DLRM's all-to-all on 1,024 servers).
const topoopt::FinderOptions kFabricOnly{.primes_only = false, .route_mp = false};

// Algorithm 5 (topoopt/reconfig_links.h) as a reconfigurable fabric's circuit planner.
auto algorithm5(int servers, int degree, bool discount) {
  return [servers, degree, discount](const std::vector<std::tuple<int, int, double>>& demand) {
    std::vector<topoopt::Demand> d;
    for (const auto& [src, dst, bytes] : demand) d.push_back({src, dst, bytes});
    return topoopt::reconfig_links(servers, degree, d, discount);
  };
}

}  // namespace

const std::vector<std::string>& iteration_fabric_names() {
  static const std::vector<std::string> names = {
      "ideal-fat-tree", "cost-equivalent-fat-tree", "oversub-fat-tree", "expander",
      "sip-ml",         "topoopt-oneshot",          "topoopt-reconfig"};
  return names;
}

JobFabric job_fabric(const std::string& name, int servers, int degree, double gbps, const topoopt::Traffic& traffic,
                     std::uint64_t seed, const std::string& field, double reconfig_latency_ns) {
  JobFabric f;
  f.name = name;
  f.server_gbps = degree * gbps;
  if (name == "ideal-fat-tree") {
    f.graph = net::ideal_fat_tree(servers, degree, gbps);
  } else if (name == "cost-equivalent-fat-tree") {
    f.server_gbps = topoopt::fabric_cost(topoopt::Fabric::kCostEquivalentFatTree, servers, degree, gbps).server_gbps;
    f.graph = net::fat_tree(servers, f.server_gbps);
  } else if (name == "oversub-fat-tree") {
    f.graph = net::oversubscribed_fat_tree(servers, 16, degree * gbps);
  } else if (name == "expander") {
    f.graph = net::expander(servers, degree, gbps, seed);
  } else if (name == "sip-ml") {
    // Appendix E: d wavelengths of B per server, starting as SiP-Ring's physical ring, re-allocated
    // by Algorithm 5 with Discount = 1 (for SiP-ML's ILP) with a 25 us reconfiguration latency.
    f.graph = net::full_mesh(servers, gbps);
    for (const auto& g : traffic.allreduce_groups) {
      net::GroupRings rings{g.servers, {g.servers}};
      if (degree >= 2 && g.servers.size() > 2) rings.orders.emplace_back(g.servers.rbegin(), g.servers.rend());
      f.graph.rings.push_back(std::move(rings));
    }
    f.reconfiguration.emplace();
    f.reconfiguration->latency_ns = kSipMlReconfigLatencyNs;
    f.reconfiguration->circuit_gbps = gbps;
    for (const auto& l : net::sipml_ring(servers, degree, gbps).links)
      f.reconfiguration->initial.emplace_back(l.from, l.to);
    f.reconfiguration->allocate = algorithm5(servers, degree, false);
  } else if (name == "topoopt-oneshot") {
    f.graph = topoopt::topology_fabric(topoopt::topology_finder(servers, degree, traffic, kFabricOnly), gbps);
  } else if (name == "topoopt-reconfig") {
    f.graph = net::full_mesh(servers, gbps);
    f.reconfiguration.emplace();
    f.reconfiguration->latency_ns = reconfig_latency_ns;
    f.reconfiguration->circuit_gbps = gbps;
    f.reconfiguration->initial = topoopt::topology_finder(servers, degree, traffic, kFabricOnly).edges;
    f.reconfiguration->allocate = algorithm5(servers, degree, true);
  } else {
    throw InputError(
        field, fmt::format("unknown fabric '{}'{}; choose one of: {}", name,
                           did_you_mean(name, iteration_fabric_names()), fmt::join(iteration_fabric_names(), ", ")));
  }
  f.graph.name = fmt::format("{}-n{}-d{}-{}g", name, servers, degree, gbps);
  return f;
}

}  // namespace chorus::eval
