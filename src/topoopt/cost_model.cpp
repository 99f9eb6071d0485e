#include "topoopt/cost_model.h"

#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace chorus::topoopt {
namespace {

// Table 3 of the paper (US$): transceiver, NIC, electrical switch port; the optical parts cost
// the same at every speed (patch panel port $100, OCS port $520, 1x2 switch $25).
struct Row {
  double gbps, transceiver, nic, switch_port;
};
constexpr Row kTable3[] = {
    {10, 20, 180, 87}, {25, 39, 185, 144}, {40, 39, 376, 144}, {100, 99, 660, 225}, {200, 2 * 99, 790, 2 * 225},
};

// Switch tiers of a folded Clos of radix-k switches that reaches n servers: 2 (k/2)^L >= n.
int fat_tree_tiers(int servers, int radix) {
  int tiers = 1;
  for (double reach = radix; reach < servers; reach *= radix / 2.0) ++tiers;
  return tiers;
}

// A server link of x Gb/s: one plane of Table 3 parts at x, or x / 100 planes of 100G parts above
// 200 Gb/s (the paper's rule for 200G, generalized). Returns {planes, part speed}.
std::pair<int, double> planes_for(double x) {
  for (const auto& r : kTable3)
    if (r.gbps == x) return {1, x};
  if (x > 200 && std::fmod(x, 100) == 0) return {static_cast<int>(x / 100), 100};
  throw InputError("bandwidth", fmt::format("a Fat-tree link of {} Gb/s has no price: Table 3 lists 10, 25, 40, 100 "
                                            "and 200 Gb/s, and larger multiples of 100 Gb/s are priced as 100G parts",
                                            x));
}

// Parts and prices of a Fat-tree whose servers each have one link of x Gb/s; `oversub`: 2:1, half
// of every uplink layer omitted.
FabricCost fat_tree(Fabric fabric, int servers, int degree, double b, double x, bool oversub, const CostOptions& o) {
  FabricCost c;
  c.fabric = fabric;
  c.servers = servers;
  c.degree = degree;
  c.server_gbps = x;
  c.bandwidth_gbps = b;
  c.tiers = fat_tree_tiers(servers, o.switch_radix);
  const auto [planes, part_gbps] = planes_for(x);
  const auto p = table3_prices(part_gbps);
  const double up = oversub ? 0.5 : 1.0;
  // Per server and plane: the server-ToR link, then `up` of a link per further tier; a link has a
  // transceiver at each end and one fibre; a switch port at each switch end.
  const double links = 1 + up * (c.tiers - 1);
  const double ports = 1 + 2 * up * (c.tiers - 1);
  const double n = static_cast<double>(servers) * planes;
  c.transceivers = n * 2 * links;
  c.switch_ports = n * ports;
  c.fibres = n * links;
  c.interconnect_usd =
      c.transceivers * p.transceiver + c.switch_ports * p.switch_port + c.fibres * o.fibre_usd_per_m * o.fibre_mean_m;
  c.nic_usd = n * p.nic;
  return c;
}

}  // namespace

std::string to_string(Fabric f) {
  switch (f) {
    case Fabric::kIdealFatTree:
      return "ideal-fat-tree";
    case Fabric::kCostEquivalentFatTree:
      return "cost-equivalent-fat-tree";
    case Fabric::kOversubFatTree:
      return "oversub-fat-tree";
    case Fabric::kExpander:
      return "expander";
    case Fabric::kTopoOptOneShot:
      return "topoopt-oneshot";
    case Fabric::kTopoOptReconfig:
      return "topoopt-reconfig";
  }
  return "?";
}

std::vector<Fabric> all_fabrics() {
  return {Fabric::kIdealFatTree, Fabric::kCostEquivalentFatTree, Fabric::kOversubFatTree,
          Fabric::kExpander,     Fabric::kTopoOptOneShot,        Fabric::kTopoOptReconfig};
}

Fabric parse_fabric(const std::string& name, const std::string& where) {
  std::vector<std::string> names;
  for (auto f : all_fabrics()) {
    if (to_string(f) == name) return f;
    names.push_back(to_string(f));
  }
  throw InputError(where, fmt::format("unknown fabric '{}' (fabrics: {})", name, fmt::join(names, ", ")));
}

PartPrices table3_prices(double gbps, const std::string& where) {
  for (const auto& r : kTable3)
    if (r.gbps == gbps) {
      PartPrices p;
      p.gbps = r.gbps;
      p.transceiver = r.transceiver;
      p.nic = r.nic;
      p.switch_port = r.switch_port;
      return p;
    }
  throw InputError(where, fmt::format("no prices for {} Gb/s: Table 3 lists 10, 25, 40, 100 and 200 Gb/s", gbps));
}

FabricCost fabric_cost(Fabric fabric, int servers, int degree, double bandwidth_gbps, const CostOptions& o) {
  if (servers < 2) throw InputError("servers", fmt::format("a fabric needs at least 2 servers, got {}", servers));
  if (degree < 1) throw InputError("degree", fmt::format("every server needs at least 1 interface, got {}", degree));
  if (o.switch_radix < 4 || o.switch_radix % 2)
    throw InputError("switch_radix", fmt::format("must be even and >= 4, got {}", o.switch_radix));
  const auto p = table3_prices(bandwidth_gbps);
  const double fibre = o.fibre_usd_per_m * o.fibre_mean_m;
  const double interfaces = static_cast<double>(servers) * degree;
  FabricCost c;
  c.fabric = fabric;
  c.servers = servers;
  c.degree = degree;
  c.bandwidth_gbps = bandwidth_gbps;
  c.server_gbps = degree * bandwidth_gbps;
  c.nic_usd = interfaces * p.nic;
  switch (fabric) {
    case Fabric::kIdealFatTree:
      return fat_tree(fabric, servers, degree, bandwidth_gbps, degree * bandwidth_gbps, false, o);
    case Fabric::kOversubFatTree:
      return fat_tree(fabric, servers, degree, bandwidth_gbps, degree * bandwidth_gbps, true, o);
    case Fabric::kCostEquivalentFatTree: {
      // One link per server of x < d x B: the fastest with a price whose Fat-tree costs no more
      // than TopoOpt-oneshot; the slowest (10 Gb/s) if none does.
      const double budget = fabric_cost(Fabric::kTopoOptOneShot, servers, degree, bandwidth_gbps, o).interconnect_usd;
      std::vector<double> speeds = {10, 25, 40, 100, 200};
      for (double x = 300; x < degree * bandwidth_gbps; x += 100) speeds.push_back(x);
      FabricCost best = fat_tree(fabric, servers, degree, bandwidth_gbps, 10, false, o);
      for (double x : speeds) {
        if (x >= degree * bandwidth_gbps) break;
        auto candidate = fat_tree(fabric, servers, degree, bandwidth_gbps, x, false, o);
        if (candidate.interconnect_usd <= budget) best = candidate;
      }
      return best;
    }
    case Fabric::kExpander:  // d interfaces per server, cabled directly: a cable joins two interfaces
      c.transceivers = interfaces;
      c.fibres = interfaces / 2;
      break;
    case Fabric::kTopoOptOneShot:  // per interface a 1x2 switch to two patch panels (look-ahead, Sec. 4)
      c.transceivers = interfaces;
      c.one_by_two_switches = interfaces;
      c.patch_panel_ports = 2 * interfaces;
      c.fibres = 2 * interfaces;
      break;
    case Fabric::kTopoOptReconfig:  // d OCSs, each interface on one OCS port
      c.transceivers = interfaces;
      c.ocs_ports = interfaces;
      c.fibres = interfaces;
      break;
  }
  c.interconnect_usd = c.transceivers * p.transceiver + c.patch_panel_ports * p.patch_panel_port +
                       c.ocs_ports * p.ocs_port + c.one_by_two_switches * p.one_by_two_switch + c.fibres * fibre;
  return c;
}

}  // namespace chorus::topoopt
