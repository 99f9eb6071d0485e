// The random networks of `chorus reproduce themis-real --random N --seed S`: the same networks
// for the same seed, other networks for another seed, and every network within the documented
// ranges (read back through the network YAML parser, which also validates it).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "net/network_yaml.h"
#include "eval/real/themis_real_study.h"

namespace chorus::eval {
namespace {

TEST(ThemisRealNetworks, SameSeedSameNetworks) {
  const auto a = random_themis_networks(6, 42), b = random_themis_networks(6, 42);
  ASSERT_EQ(a.size(), 6u);
  ASSERT_EQ(b.size(), 6u);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].ranks, b[i].ranks);
    EXPECT_EQ(a[i].yaml, b[i].yaml);
  }
  // A shorter list is the start of the longer one: network i does not depend on the count.
  const auto c = random_themis_networks(2, 42);
  EXPECT_EQ(c[0].yaml, a[0].yaml);
  EXPECT_EQ(c[1].yaml, a[1].yaml);
  EXPECT_TRUE(random_themis_networks(0, 42).empty());
}

TEST(ThemisRealNetworks, OtherSeedOtherNetworks) {
  const auto a = random_themis_networks(4, 1), b = random_themis_networks(4, 2);
  int same = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    same += a[i].yaml.substr(a[i].yaml.find('\n')) == b[i].yaml.substr(b[i].yaml.find('\n'));
  EXPECT_EQ(same, 0);
  EXPECT_EQ(a[0].name.rfind("rnd1-1_", 0), 0u) << a[0].name;
  EXPECT_EQ(b[3].name.rfind("rnd2-4_", 0), 0u) << b[3].name;
}

TEST(ThemisRealNetworks, EveryNetworkWithinTheRanges) {
  const std::set<std::vector<int>> shapes = {{2, 2}, {2, 3}, {3, 2}, {2, 4}, {4, 2}, {2, 2, 2}};
  std::set<std::vector<int>> shapes_seen;
  std::set<net::DimKind> kinds_seen;
  std::set<std::string> names;
  int high_latency_rings = 0;  // the case: a ring with a step latency of 200 us or more
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    for (const auto& n : random_themis_networks(5, seed)) {
      SCOPED_TRACE(n.yaml);
      EXPECT_TRUE(names.insert(n.name).second) << "duplicate name " << n.name;
      const net::Network net = net::parse_network_yaml(n.yaml, n.name);  // validates, throws on a bad field
      EXPECT_EQ(net.name, n.name);
      std::vector<int> shape;
      std::set<net::DimKind> kinds;
      for (const auto& d : net.dims) {
        shape.push_back(d.size);
        kinds.insert(d.kind);
        kinds_seen.insert(d.kind);
        const int links = d.kind == net::DimKind::kRing ? 2 : d.kind == net::DimKind::kFullyConnected ? d.size - 1 : 1;
        EXPECT_EQ(d.links_per_npu, links);
        // The YAML keeps 6 significant digits of the link bandwidth.
        EXPECT_GE(d.aggregate_bandwidth_gbps(), kRandomMinBandwidthGbps * (1 - 1e-5));
        EXPECT_LE(d.aggregate_bandwidth_gbps(), kRandomMaxBandwidthGbps * (1 + 1e-5));
        EXPECT_GE(d.latency_ns, kRandomMinLatencyNs);
        EXPECT_LE(d.latency_ns, kRandomMaxLatencyNs);
        EXPECT_EQ(static_cast<long>(d.latency_ns) % 1000, 0);  // whole microseconds
        if (d.kind == net::DimKind::kRing && d.latency_ns >= 200'000) ++high_latency_rings;
      }
      EXPECT_TRUE(shapes.count(shape)) << net.shape();
      shapes_seen.insert(shape);
      EXPECT_GE(kinds.size(), 2u) << "a single kind";
      EXPECT_EQ(static_cast<std::uint64_t>(n.ranks), net.num_npus());
      EXPECT_GE(n.ranks, 4);
      EXPECT_LE(n.ranks, 8);
      EXPECT_NE(n.name.find("-" + net.shape()), std::string::npos) << "the name ends in the shape";
    }
  }
  // 200 networks draw every shape and kind, and some rings of high latency.
  EXPECT_EQ(shapes_seen, shapes);
  EXPECT_EQ(kinds_seen.size(), 3u);
  EXPECT_GT(high_latency_rings, 0);
}

}  // namespace
}  // namespace chorus::eval
