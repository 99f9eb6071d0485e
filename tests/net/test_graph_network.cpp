// GraphNetwork, routing and the Sec. 5.1 fabric builders. Expected values by hand in comments.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "net/graph/fabrics.h"
#include "net/graph/graph_network.h"
#include "net/graph/routing.h"

using namespace chorus::net;

TEST(GraphNetwork, ValidateNamesTheLink) {
  GraphNetwork g;
  g.name = "g";
  g.servers = 2;
  g.add_link(0, 1, 10.0);
  g.add_link(0, 5, 10.0);  // node 5 does not exist (nodes 0..1)
  try {
    validate(g, "test.yaml");
    FAIL() << "expected InputError";
  } catch (const chorus::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("links[1]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'to'"), std::string::npos) << e.what();
  }
  g.links[1] = GraphLink{1, 0, 0.0, 1000.0};
  EXPECT_THROW(validate(g, "x"), chorus::InputError);  // non-positive bandwidth
  g.links[1].gbps = 5.0;
  EXPECT_NO_THROW(validate(g, "x"));
}

TEST(GraphRouting, FatTreePathIsUpThenDown) {
  // Links are added per server: up (s -> switch) = 2s, down (switch -> s) = 2s+1.
  // Server 0 -> server 3: up link 0, then down link 7.
  const auto g = fat_tree(4, 100.0);
  Router r(g);
  EXPECT_EQ(r.shortest_path(0, 3), (Path{0, 7}));
  EXPECT_TRUE(r.shortest_path(2, 2).empty());
}

TEST(GraphRouting, TieBreakTakesLowestLinkIndex) {
  // Two parallel links 0->1 (indices 0 and 1): the lowest index wins.
  GraphNetwork g;
  g.servers = 2;
  g.add_link(0, 1, 1.0);
  g.add_link(0, 1, 1.0);
  EXPECT_EQ(Router(g).shortest_path(0, 1), (Path{0}));
}

TEST(GraphRouting, UnreachableIsAnInputError) {
  GraphNetwork g;
  g.name = "oneway";
  g.servers = 2;
  g.add_link(0, 1, 1.0);
  EXPECT_THROW(Router(g).shortest_path(1, 0), chorus::InputError);
}

TEST(FabricBuilders, IdealFatTreeHasOneLinkEachWayOfDTimesB) {
  const auto g = ideal_fat_tree(8, 4, 25.0);
  EXPECT_EQ(g.switches, 1);
  EXPECT_EQ(g.links.size(), 16u);                                 // 8 servers x 2 directions
  for (const auto& l : g.links) EXPECT_DOUBLE_EQ(l.gbps, 100.0);  // d x B = 4 x 25
}

TEST(FabricBuilders, OversubscribedUplinksCarryHalf) {
  // 8 servers, 4 per ToR -> 2 ToRs + 1 core; 16 server links + 2 x 2 uplinks = 20.
  const auto g = oversubscribed_fat_tree(8, 4, 100.0);
  EXPECT_EQ(g.switches, 3);
  ASSERT_EQ(g.links.size(), 20u);
  for (std::size_t i = 16; i < 20; ++i) EXPECT_DOUBLE_EQ(g.links[i].gbps, 200.0);  // 4 x 100 / 2
  // Server 0 (ToR 8) -> server 7 (ToR 9): server-ToR-core-ToR-server = 4 hops.
  EXPECT_EQ(Router(g).shortest_path(0, 7).size(), 4u);
}

TEST(FabricBuilders, ExpanderIsRegularDeterministicAndStronglyConnected) {
  const auto g = expander(16, 4, 100.0, 7);
  EXPECT_EQ(g.links.size(), 64u);  // 16 x 4
  for (int s = 0; s < 16; ++s) {
    EXPECT_EQ(g.out_degree(s), 4);
    EXPECT_EQ(g.in_degree(s), 4);
  }
  for (const auto& l : g.links) EXPECT_NE(l.from, l.to);
  EXPECT_TRUE(strongly_connected(g));
  const auto h = expander(16, 4, 100.0, 7);
  ASSERT_EQ(h.links.size(), g.links.size());
  for (std::size_t i = 0; i < g.links.size(); ++i) EXPECT_EQ(h.links[i].to, g.links[i].to);
}

TEST(FabricBuilders, SipmlRingSplitsWavelengths) {
  // d = 3: 2 wavelengths clockwise, 1 counter-clockwise; 5 servers x 3 = 15 links.
  const auto g = sipml_ring(5, 3, 100.0);
  EXPECT_EQ(g.links.size(), 15u);
  int cw = 0, ccw = 0;
  for (const auto& l : g.links) {
    if (l.from == 0 && l.to == 1) ++cw;
    if (l.from == 0 && l.to == 4) ++ccw;
  }
  EXPECT_EQ(cw, 2);
  EXPECT_EQ(ccw, 1);
}

TEST(FabricBuilders, DirectConnectChecksDegree) {
  const auto g = direct_connect(3, 1, 100.0, {{0, 1}, {1, 2}, {2, 0}});
  EXPECT_EQ(g.links.size(), 3u);
  EXPECT_EQ(Router(g).shortest_path(0, 2).size(), 2u);  // 0->1->2
  try {
    direct_connect(3, 1, 100.0, {{0, 1}, {1, 2}, {0, 2}});  // server 0 gets a 2nd out-link
    FAIL() << "expected InputError";
  } catch (const chorus::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("edges[2]"), std::string::npos) << e.what();
  }
}

#include "net/graph/graph_yaml.h"

TEST(GraphYaml, ReadsBothLinkForms) {
  const auto g = parse_fabric_yaml(
      "fabric:\n"
      "  name: tri\n"
      "  servers: 3\n"
      "  degree: 1\n"
      "  link_gbps: 100\n"
      "  links:\n"
      "    - [0, 1]\n"
      "    - {from: 1, to: 2, gbps: 50, latency_us: 2}\n"
      "    - [2, 0]\n",
      "tri.yaml");
  ASSERT_EQ(g.links.size(), 3u);
  EXPECT_DOUBLE_EQ(g.links[0].gbps, 100.0);
  EXPECT_DOUBLE_EQ(g.links[0].latency_ns, 1000.0);  // default 1 us
  EXPECT_DOUBLE_EQ(g.links[1].gbps, 50.0);
  EXPECT_DOUBLE_EQ(g.links[1].latency_ns, 2000.0);
}

TEST(GraphYaml, WrittenFabricReadsBackEqual) {
  auto g = expander(6, 2, 25.0, 5);
  g.links[3].gbps = 12.5;
  g.links[4].latency_ns = 1500.0;
  const auto h = parse_fabric_yaml(write_fabric_yaml(g), "rt.yaml");
  EXPECT_EQ(h.name, g.name);
  EXPECT_EQ(h.servers, g.servers);
  EXPECT_TRUE(h.rings.empty());
  ASSERT_EQ(h.links.size(), g.links.size());
  for (std::size_t i = 0; i < g.links.size(); ++i) {
    EXPECT_EQ(h.links[i].from, g.links[i].from);
    EXPECT_EQ(h.links[i].to, g.links[i].to);
    EXPECT_DOUBLE_EQ(h.links[i].gbps, g.links[i].gbps);
    EXPECT_DOUBLE_EQ(h.links[i].latency_ns, g.links[i].latency_ns);
  }
}

TEST(GraphYaml, WrittenRingsReadBackEqual) {
  auto g = sipml_ring(6, 2, 25.0);
  g.rings.push_back({{0, 2, 4}, {{0, 2, 4}, {0, 4, 2}}});
  g.rings.push_back({{1, 3}, {{3, 1}}});
  const auto h = parse_fabric_yaml(write_fabric_yaml(g), "rt.yaml");
  ASSERT_EQ(h.rings.size(), 2u);
  EXPECT_EQ(h.rings[0].servers, (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(h.rings[0].orders, (std::vector<std::vector<int>>{{0, 2, 4}, {0, 4, 2}}));
  EXPECT_EQ(h.rings[1].orders, (std::vector<std::vector<int>>{{3, 1}}));
}

namespace {
std::string yaml_error(const std::string& text) {
  try {
    parse_fabric_yaml(text, "f.yaml");
  } catch (const chorus::InputError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST(GraphYaml, ErrorsNameLineAndField) {
  const std::string head = "fabric:\n  servers: 2\n  link_gbps: 10\n";
  // Line 5 holds the bad link (1-based: fabric, servers, link_gbps, links, - [0, 7]).
  auto e = yaml_error(head + "  links:\n    - [0, 7]\n");
  EXPECT_NE(e.find("f.yaml:5"), std::string::npos) << e;
  EXPECT_NE(e.find("fabric.links[0]"), std::string::npos) << e;
  e = yaml_error(head + "  linkz: []\n");  // unknown key on line 4
  EXPECT_NE(e.find("f.yaml:4"), std::string::npos) << e;
  EXPECT_NE(e.find("linkz"), std::string::npos) << e;
  e = yaml_error(head + "  links:\n    - {from: 0, to: 1, gbps: -3}\n");
  EXPECT_NE(e.find("f.yaml:5"), std::string::npos) << e;
  EXPECT_NE(e.find("gbps"), std::string::npos) << e;
  // Rings: line 6 holds the group whose order repeats a server; line 5 one out of range.
  e = yaml_error(head + "  links: []\n  rings:\n    - {servers: [0, 1], orders: [[0, 0]]}\n");
  EXPECT_NE(e.find("f.yaml:6"), std::string::npos) << e;
  EXPECT_NE(e.find("fabric.rings[0].orders[0]"), std::string::npos) << e;
  e = yaml_error(head +
                 "  links: []\n  rings:\n    - {servers: [0, 1], orders: []}\n    - {servers: [1, 5], orders: []}\n");
  EXPECT_NE(e.find("f.yaml:7"), std::string::npos) << e;
  EXPECT_NE(e.find("fabric.rings[1]: server 5 out of range"), std::string::npos) << e;
  e = yaml_error("fabric:\n  servers: two\n  link_gbps: 10\n  links: []\n");
  EXPECT_NE(e.find("f.yaml:2"), std::string::npos) << e;
  EXPECT_NE(e.find("fabric.servers"), std::string::npos) << e;
}
