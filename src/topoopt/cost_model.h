#pragma once
// What a fabric costs (TopoOpt Sec. 5.2, Table 3, Fig. 11). The paper gives component prices and
// the parts of each architecture, not a formula; this is ours, every count derived in
// docs/topoopt.md ("Costs"). `interconnect_usd` is everything between the servers' NIC ports
// (transceivers, switch, patch-panel and OCS ports, 1x2 switches, fibre), which is what Fig. 11
// compares; the NICs are reported apart (`nic_usd`).
#include <string>
#include <vector>

namespace chorus::topoopt {

enum class Fabric {
  kIdealFatTree,
  kCostEquivalentFatTree,
  kOversubFatTree,
  kExpander,
  kTopoOptOneShot,
  kTopoOptReconfig
};

std::string to_string(Fabric f);
// "ideal-fat-tree", "cost-equivalent-fat-tree", "oversub-fat-tree", "expander", "topoopt-oneshot",
// "topoopt-reconfig"; InputError naming `where` and the choices otherwise.
Fabric parse_fabric(const std::string& name, const std::string& where);
std::vector<Fabric> all_fabrics();

// One row of Table 3 (US dollars).
struct PartPrices {
  double gbps = 0;
  double transceiver = 0;
  double nic = 0;
  double switch_port = 0;
  double patch_panel_port = 100;
  double ocs_port = 520;
  double one_by_two_switch = 25;
};

// Table 3's row for 10, 25, 40, 100 or 200 Gb/s (200G parts priced as 2 x 100G, as the paper
// says). Other speeds: InputError naming `where` and the speeds there are.
PartPrices table3_prices(double gbps, const std::string& where = "bandwidth");

struct CostOptions {
  int switch_radix = 32;          // ports per electrical switch (Fat-tree tiers)
  double fibre_usd_per_m = 0.30;  // Sec. 5.2
  double fibre_mean_m = 500;      // lengths uniform in 0..1000 m: the mean
};

struct FabricCost {
  Fabric fabric = Fabric::kIdealFatTree;
  int servers = 0;
  int degree = 0;
  double bandwidth_gbps = 0;  // B, per interface, as asked
  double server_gbps = 0;     // what one server can send at once: d x B; the cost-equivalent Fat-tree's d x B'
  int tiers = 0;              // Fat-trees: switch tiers; 0 for direct-connect fabrics
  double transceivers = 0, switch_ports = 0, patch_panel_ports = 0, ocs_ports = 0, one_by_two_switches = 0, fibres = 0;
  double interconnect_usd = 0;
  double nic_usd = 0;
  double total_usd() const { return interconnect_usd + nic_usd; }
};

// Throws InputError for servers < 2, degree < 1, or a bandwidth without a Table 3 row.
FabricCost fabric_cost(Fabric fabric, int servers, int degree, double bandwidth_gbps, const CostOptions& options = {});

}  // namespace chorus::topoopt
