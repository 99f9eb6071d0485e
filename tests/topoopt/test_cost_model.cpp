// The fabric cost model (TopoOpt Sec. 5.2, Table 3) against part counts and prices worked out by
// hand in the comments (docs/topoopt.md, "Costs", derives each count).
#include <gtest/gtest.h>

#include "core/error.h"
#include "eval/topoopt_costs.h"
#include "topoopt/cost_model.h"

namespace chorus::topoopt {
namespace {

TEST(CostModel, Table3Rows) {
  EXPECT_DOUBLE_EQ(table3_prices(10).transceiver, 20);
  EXPECT_DOUBLE_EQ(table3_prices(40).nic, 376);
  EXPECT_DOUBLE_EQ(table3_prices(100).switch_port, 225);
  // 200G transceivers and switch ports as 2 x 100G (the paper's footnote); the NIC has a price.
  EXPECT_DOUBLE_EQ(table3_prices(200).transceiver, 198);
  EXPECT_DOUBLE_EQ(table3_prices(200).switch_port, 450);
  EXPECT_DOUBLE_EQ(table3_prices(200).nic, 790);
  EXPECT_THROW(table3_prices(50), InputError);
}

TEST(CostModel, Figure11PointsByHand) {
  // 128 servers, d = 4, B = 100 Gb/s; radix-32 switches reach 32 servers in one tier, 32 x 16 =
  // 512 in two: two tiers. A fibre: 500 m mean x $0.30 = $150.
  // Ideal Fat-tree: one 400G link per server = 4 planes of 100G parts. Per plane and server: 2
  // links (server-ToR, ToR-spine), 4 transceivers, 3 switch ports, 2 fibres:
  // 4 x 99 + 3 x 225 + 2 x 150 = 1371; x 4 planes x 128 servers = 701,952.
  EXPECT_DOUBLE_EQ(fabric_cost(Fabric::kIdealFatTree, 128, 4, 100).interconnect_usd, 701952);
  EXPECT_EQ(fabric_cost(Fabric::kIdealFatTree, 128, 4, 100).tiers, 2);
  // 2:1 oversubscribed: half the ToR-spine link: 1.5 links, 3 transceivers, 2 ports, 1.5 fibres:
  // 297 + 450 + 225 = 972; x 4 x 128 = 497,664.
  EXPECT_DOUBLE_EQ(fabric_cost(Fabric::kOversubFatTree, 128, 4, 100).interconnect_usd, 497664);
  // TopoOpt-oneshot, per interface: transceiver 99, 1x2 switch 25, two patch-panel ports 200, two
  // fibres 300 = 624; x 512 interfaces = 319,488.
  EXPECT_DOUBLE_EQ(fabric_cost(Fabric::kTopoOptOneShot, 128, 4, 100).interconnect_usd, 319488);
  // TopoOpt-reconfig, per interface: 99 + OCS port 520 + one fibre 150 = 769; x 512 = 393,728.
  EXPECT_DOUBLE_EQ(fabric_cost(Fabric::kTopoOptReconfig, 128, 4, 100).interconnect_usd, 393728);
  // Expander, per interface: 99 + half a fibre (a cable joins two interfaces) 75 = 174; x 512.
  EXPECT_DOUBLE_EQ(fabric_cost(Fabric::kExpander, 128, 4, 100).interconnect_usd, 89088);
  // Cost-equivalent: the fastest single link below 400G whose Fat-tree costs <= 319,488.
  // 300G (3 x 1371 x 128 = 526,464) is over; 200G (4 x 198 + 3 x 450 + 2 x 150 = 2442; x 128 =
  // 312,576) fits, so B' = 50 Gb/s.
  const auto eq = fabric_cost(Fabric::kCostEquivalentFatTree, 128, 4, 100);
  EXPECT_DOUBLE_EQ(eq.interconnect_usd, 312576);
  EXPECT_DOUBLE_EQ(eq.server_gbps, 200);
  EXPECT_DOUBLE_EQ(eq.bandwidth_gbps, 100);
  // NICs apart: 4 x 660 per server for every d x 100G fabric; the 200G NIC ($790) for B' = 50.
  EXPECT_DOUBLE_EQ(fabric_cost(Fabric::kTopoOptOneShot, 128, 4, 100).nic_usd, 128 * 4 * 660);
  EXPECT_DOUBLE_EQ(eq.nic_usd, 128 * 790);
}

TEST(CostModel, ThreeTiersAbove512Servers) {
  // 1024 servers need three tiers of radix-32 switches (up to 32 x 16 x 16 = 8192): per plane and
  // server 3 links, 6 transceivers, 5 ports, 3 fibres: 594 + 1125 + 450 = 2169; x 4 x 1024.
  const auto c = fabric_cost(Fabric::kIdealFatTree, 1024, 4, 100);
  EXPECT_EQ(c.tiers, 3);
  EXPECT_DOUBLE_EQ(c.interconnect_usd, 2169.0 * 4 * 1024);
  // Against TopoOpt-oneshot (624 per interface): 8676 / 2496 = 3.476x.
  EXPECT_NEAR(c.interconnect_usd / fabric_cost(Fabric::kTopoOptOneShot, 1024, 4, 100).interconnect_usd, 3.476, 5e-4);
  // A radix of 64 reaches 2048 in two tiers.
  CostOptions o;
  o.switch_radix = 64;
  EXPECT_EQ(fabric_cost(Fabric::kIdealFatTree, 1024, 4, 100, o).tiers, 2);
}

TEST(CostModel, BadFabricArgumentsAndNamesAreInputErrorsAndEveryNameParsesBack) {
  EXPECT_THROW(fabric_cost(Fabric::kExpander, 1, 4, 100), InputError);
  EXPECT_THROW(fabric_cost(Fabric::kExpander, 16, 0, 100), InputError);
  EXPECT_THROW(fabric_cost(Fabric::kExpander, 16, 4, 60), InputError);
  try {
    parse_fabric("fat-tree", "--fabric");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("ideal-fat-tree"), std::string::npos) << e.what();
  }
  for (auto f : all_fabrics()) EXPECT_EQ(parse_fabric(to_string(f), "x"), f);
}

TEST(CostStudy, HeadlineRatios) {
  // Averages over Fig. 11's 8 points; each ratio by hand from the per-server costs:
  // ideal / oneshot: d = 4, B = 100: 5484 / 2496 (2 tiers: 128, 432), 8676 / 2496 (3 tiers: 1024,
  // 2000); d = 8, B = 200, ideal = 16 planes of 100G: 16 x 1371 / (8 x 723), 16 x 2169 / 5784.
  const auto s = eval::run_cost_study();
  const double expected = (2 * 5484.0 / 2496 + 2 * 8676.0 / 2496 + 2 * 21936.0 / 5784 + 2 * 34704.0 / 5784) / 8;
  EXPECT_NEAR(s.ideal_over_oneshot_mean, expected, 1e-9);
  // reconfig / oneshot: 769 / 624 at 100G, (198 + 520 + 150) / (198 + 25 + 200 + 300) at 200G.
  EXPECT_NEAR(s.reconfig_over_oneshot_mean, (769.0 / 624 + 868.0 / 723) / 2, 1e-9);
  EXPECT_EQ(s.rows.size(), 2u * 4u * 6u);
}

}  // namespace
}  // namespace chorus::topoopt
