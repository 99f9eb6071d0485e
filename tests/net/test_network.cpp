#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "net/network_yaml.h"
#include "net/presets.h"

namespace chorus::net {
namespace {

// The error message of parsing `yaml`, or "" if it parsed.
std::string error_of(const std::string& yaml) {
  try {
    parse_network_yaml(yaml, "net.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Presets, MatchThemisTable2) {
  struct Row {
    const char* name;
    std::vector<int> sizes;
    std::vector<double> aggr_gbps;
    std::vector<double> lat_ns;
  };
  const Row rows[] = {
      {"2D-SW_SW", {16, 64}, {1200, 800}, {700, 1700}},
      {"3D-SW_SW_SW_homo", {16, 8, 8}, {800, 800, 800}, {700, 700, 1700}},
      {"3D-SW_SW_SW_hetero", {16, 8, 8}, {1600, 800, 400}, {700, 700, 1700}},
      {"3D-FC_Ring_SW", {8, 16, 8}, {1400, 800, 400}, {700, 700, 1700}},
      {"4D-Ring_SW_SW_SW", {4, 4, 8, 8}, {2000, 1600, 800, 400}, {20, 700, 700, 1700}},
      {"4D-Ring_FC_Ring_SW", {4, 8, 4, 8}, {3000, 1400, 1200, 800}, {20, 700, 700, 1700}},
  };
  for (const auto& row : rows) {
    auto n = find_preset(row.name);
    ASSERT_TRUE(n) << row.name;
    EXPECT_EQ(n->num_npus(), 1024u) << row.name;
    ASSERT_EQ(n->dims.size(), row.sizes.size());
    for (size_t k = 0; k < row.sizes.size(); ++k) {
      EXPECT_EQ(n->dims[k].size, row.sizes[k]) << row.name << " dim " << k;
      EXPECT_DOUBLE_EQ(n->dims[k].aggregate_bandwidth_gbps(), row.aggr_gbps[k]) << row.name << " dim " << k;
      EXPECT_DOUBLE_EQ(n->dims[k].latency_ns, row.lat_ns[k]);
    }
  }
  EXPECT_EQ(table2_presets().size(), 6u);
  auto current = find_preset("2D-current");
  ASSERT_TRUE(current);
  EXPECT_DOUBLE_EQ(current->dims[0].aggregate_bandwidth_gbps(), 1200);
  EXPECT_DOUBLE_EQ(current->dims[1].aggregate_bandwidth_gbps(), 100);
}

TEST(NetworkYaml, ParsesChorusFormat) {
  const auto n = parse_network_yaml(R"(name: my-net
dims:
  - {kind: switch, size: 16, link_bandwidth_gbps: 200, links_per_npu: 4, latency_ns: 700}
  - {kind: ring,   size: 8,  link_bandwidth_gbps: 200, links_per_npu: 2, latency_ns: 700}
  - {kind: fully_connected, size: 6, link_bandwidth_gbps: 100, links_per_npu: 5, latency_ns: 10}
)",
                                    "x.yaml");
  EXPECT_EQ(n.name, "my-net");
  ASSERT_EQ(n.num_dims(), 3);
  EXPECT_EQ(n.dims[1].kind, DimKind::kRing);
  EXPECT_DOUBLE_EQ(n.dims[0].aggregate_bandwidth_gbps(), 800);
  EXPECT_EQ(n.dims[2].kind, DimKind::kFullyConnected);
  EXPECT_EQ(n.num_npus(), 16u * 8 * 6);
}

TEST(NetworkYaml, ParsesAstraSimFormat) {
  const auto n = parse_network_yaml(R"(topology: [ Ring, FullyConnected, Switch ]
npus_count: [ 4, 8, 4 ]
bandwidth: [ 50.0, 25.0, 12.5 ]  # GB/s
latency: [ 500.0, 500.0, 500.0 ] # ns
)",
                                    "astra.yml");
  ASSERT_EQ(n.num_dims(), 3);
  EXPECT_EQ(n.dims[0].kind, DimKind::kRing);
  EXPECT_EQ(n.dims[1].kind, DimKind::kFullyConnected);
  // ASTRA-sim's meaning: GB = 2^30 bytes; a fully connected NPU has a link of `bandwidth` to each
  // of its 7 peers; a switch's messages take two hops of `latency`.
  EXPECT_DOUBLE_EQ(n.dims[0].aggregate_bandwidth_gbps(), 50 * 8 * 1.073741824);
  EXPECT_DOUBLE_EQ(n.dims[1].link_bandwidth_gbps, 25 * 8 * 1.073741824);
  EXPECT_EQ(n.dims[1].links_per_npu, 7);
  EXPECT_DOUBLE_EQ(n.dims[2].aggregate_bandwidth_gbps(), 12.5 * 8 * 1.073741824);
  EXPECT_DOUBLE_EQ(n.dims[0].latency_ns, 500);
  EXPECT_DOUBLE_EQ(n.dims[1].latency_ns, 500);
  EXPECT_DOUBLE_EQ(n.dims[2].latency_ns, 1000);
  EXPECT_TRUE(n.dims[0].per_message_bandwidth);
  EXPECT_EQ(n.name, "astra");
}

// link_bandwidth_GBps is GB/s, link_bandwidth_gbps Gb/s: 25 GB/s = 200 Gb/s, x 4 links = 800 Gb/s
// = 100 GB/s per NPU.
TEST(NetworkYaml, BandwidthInGBpsOrGbps) {
  const auto bytes = net::parse_network_yaml(
      "dims:\n  - {kind: switch, size: 16, link_bandwidth_GBps: 25, links_per_npu: 4, latency_ns: 700}\n", "a.yaml");
  const auto bits = net::parse_network_yaml(
      "dims:\n  - {kind: switch, size: 16, link_bandwidth_gbps: 200, links_per_npu: 4, latency_ns: 700}\n", "b.yaml");
  EXPECT_DOUBLE_EQ(bytes.dims[0].link_bandwidth_gbps, 200);
  EXPECT_DOUBLE_EQ(bytes.dims[0].aggregate_bandwidth_gbps(), 800);
  EXPECT_DOUBLE_EQ(bits.dims[0].aggregate_bandwidth_gbps(), bytes.dims[0].aggregate_bandwidth_gbps());
  const std::string head = "dims:\n  - {kind: ring, size: 4, links_per_npu: 1, latency_ns: 1, ";
  std::string e = error_of(head + "link_bandwidth_GBps: 25, link_bandwidth_gbps: 200}\n");
  EXPECT_NE(e.find("net.yaml:2"), std::string::npos) << e;
  EXPECT_NE(e.find("not both"), std::string::npos) << e;
  e = error_of(head + "link_bandwidth_GBps: 0}\n");
  EXPECT_NE(e.find("field 'link_bandwidth_GBps' must be in 1.25e-07..125000, got 0"), std::string::npos) << e;
}

TEST(NetworkYaml, BadInputNamesFileLineAndField) {
  const std::string head = "dims:\n";
  auto dim = [](const std::string& body) { return "  - {" + body + "}\n"; };
  const std::string ok = "kind: switch, size: 16, link_bandwidth_gbps: 200, links_per_npu: 4, latency_ns: 700";

  std::string e =
      error_of(head + dim(ok) + dim("kind: torus, size: 4, link_bandwidth_gbps: 1, links_per_npu: 1, latency_ns: 1"));
  EXPECT_NE(e.find("net.yaml:3"), std::string::npos) << e;
  EXPECT_NE(e.find("torus"), std::string::npos) << e;

  e = error_of(head + dim("kind: ring, size: 1, link_bandwidth_gbps: 1, links_per_npu: 1, latency_ns: 1"));
  EXPECT_NE(e.find("'size'"), std::string::npos) << e;
  EXPECT_NE(e.find("net.yaml:2"), std::string::npos) << e;

  e = error_of(head + dim("kind: ring, size: 4, link_bandwidth_gbps: 0, links_per_npu: 1, latency_ns: 1"));
  EXPECT_NE(e.find("link_bandwidth_gbps"), std::string::npos) << e;

  e = error_of(head + dim("kind: ring, size: 4, link_bandwidth_gbps: -3, links_per_npu: 1, latency_ns: 1"));
  EXPECT_NE(e.find("link_bandwidth_gbps"), std::string::npos) << e;

  e = error_of(head + dim("kind: ring, size: 4, links_per_npu: 1, latency_ns: 1"));
  EXPECT_NE(e.find("missing field 'link_bandwidth_GBps' (GB/s; or the older 'link_bandwidth_gbps' in Gb/s)"),
            std::string::npos)
      << e;

  e = error_of(head + dim("kind: ring, size: 4, link_bandwith_gbps: 5, links_per_npu: 1, latency_ns: 1"));
  EXPECT_NE(e.find("unknown key 'link_bandwith_gbps'"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'link_bandwidth_gbps'"), std::string::npos) << e;
  EXPECT_NE(e.find("net.yaml:2"), std::string::npos) << e;

  e = error_of("name: x\nthemis: true\n" + head + dim(ok));
  EXPECT_NE(e.find("unknown key 'themis'"), std::string::npos) << e;
  EXPECT_NE(e.find("net.yaml:2"), std::string::npos) << e;

  e = error_of(head + dim("kind: switch, size: 12, link_bandwidth_gbps: 5, links_per_npu: 1, latency_ns: 1"));
  EXPECT_NE(e.find("power-of-two"), std::string::npos) << e;

  e = error_of(head + dim("kind: ring, size: four, link_bandwidth_gbps: 5, links_per_npu: 1, latency_ns: 1"));
  EXPECT_NE(e.find("size"), std::string::npos) << e;
  EXPECT_NE(e.find("integer"), std::string::npos) << e;

  e = error_of("dims: [\n");
  EXPECT_NE(e.find("YAML syntax error"), std::string::npos) << e;

  e = error_of("dims: []\n");
  EXPECT_NE(e.find("non-empty"), std::string::npos) << e;

  e = error_of("topology: [Ring, Switch]\nnpus_count: [4]\nbandwidth: [1, 1]\nlatency: [1, 1]\n");
  EXPECT_NE(e.find("'npus_count' has 1 entries"), std::string::npos) << e;

  e = error_of("topology: [Ring]\nnpus_count: [4]\nbandwidth: [1]\nlatency: [1]\nsystem: x\n");
  EXPECT_NE(e.find("unknown key 'system'"), std::string::npos) << e;
}

// A dimension may name its algorithm; a switch of 6 then runs ring instead of being refused.
TEST(NetworkYaml, DimensionAlgorithm) {
  const auto n = parse_network_yaml(
      "dims:\n  - {kind: switch, size: 6, link_bandwidth_GBps: 25, links_per_npu: 1, latency_ns: 700, algorithm: "
      "ring}\n",
      "a.yaml");
  EXPECT_EQ(n.dims[0].algorithm, Algorithm::kRing);
  EXPECT_FALSE(n.dims[0].per_message_bandwidth);  // chorus's meaning
  try {
    parse_network_yaml(
        "dims:\n  - {kind: ring, size: 4, link_bandwidth_GBps: 25, links_per_npu: 1, latency_ns: 7, algorithm: "
        "halving_dubling}\n",
        "b.yaml");
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("b.yaml:2"), std::string::npos) << m;
    EXPECT_NE(m.find("did you mean 'halving_doubling'"), std::string::npos) << m;
  }
  try {
    parse_network_yaml(
        "dims:\n  - {kind: ring, size: 6, link_bandwidth_GBps: 25, links_per_npu: 1, latency_ns: 7, algorithm: "
        "halving_doubling}\n",
        "c.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("power-of-two"), std::string::npos) << e.what();
  }
}

TEST(NetworkYaml, LoadNetworkListsPresetsForUnknownName) {
  try {
    load_network("3D-SW_SW_SW_homoo");
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("did you mean '3D-SW_SW_SW_homo'"), std::string::npos) << m;
    EXPECT_NE(m.find("2D-SW_SW"), std::string::npos) << m;
  }
  EXPECT_THROW(load_network_file("/nonexistent/file.yaml"), InputError);
}

}  // namespace
}  // namespace chorus::net
