// The flow-level model: max-min fair sharing by progressive filling. Expected values by hand.
// Units: 8 Gbit/s = 1 byte/ns, so with 8 Gbps links times in ns equal bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "core/error.h"
#include "core/rng.h"
#include "net/graph/fabrics.h"
#include "sim/flow/flow_model.h"
#include "sim/flow/traffic.h"

using namespace chorus::net;
using namespace chorus::sim::flow;

namespace {
// A line of `hops` links 0->1->2..., each 8 Gbps (1 byte/ns), with the given latency.
GraphNetwork line(int hops, double latency_ns) {
  GraphNetwork g;
  g.name = "line";
  g.servers = hops + 1;
  for (int i = 0; i < hops; ++i) g.add_link(i, i + 1, 8.0, latency_ns);
  return g;
}
Flow flow(Path p, double bytes, double start = 0.0) {
  Flow f;
  f.path = std::move(p);
  f.bytes = bytes;
  f.start_ns = start;
  return f;
}
}  // namespace

TEST(FlowModel, TwoFlowsOnOneLinkGetHalfEach) {
  // 1000 bytes each at 0.5 byte/ns -> last byte at 2000 ns; + 1000 ns latency = 3000 ns.
  const auto g = line(1, 1000.0);
  const auto r = simulate_flows(g, {flow({0}, 1000), flow({0}, 1000)});
  EXPECT_DOUBLE_EQ(r.send_done_ns[0], 2000.0);
  EXPECT_DOUBLE_EQ(r.finish_ns[0], 3000.0);
  EXPECT_DOUBLE_EQ(r.finish_ns[1], 3000.0);
  EXPECT_DOUBLE_EQ(r.link_bytes[0], 2000.0);
  EXPECT_DOUBLE_EQ(r.link_busy_ns[0], 2000.0);
}

TEST(FlowModel, ParkingLotGivesHalfToEveryFlow) {
  // Long flow over links 0 and 1, one short flow per link: each link has 2 flows -> 1/2 each.
  // 1000 bytes at 0.5 -> every last byte at 2000 ns (latency 0).
  const auto g = line(2, 0.0);
  const auto r = simulate_flows(g, {flow({0, 1}, 1000), flow({0}, 1000), flow({1}, 1000)});
  for (int f = 0; f < 3; ++f) EXPECT_DOUBLE_EQ(r.finish_ns[static_cast<std::size_t>(f)], 2000.0);
  std::vector<const Path*> paths;
  const Path a{0, 1}, b{0}, c{1};
  paths = {&a, &b, &c};
  const auto rates = max_min_rates({1.0, 1.0}, paths);
  for (double x : rates) EXPECT_DOUBLE_EQ(x, 0.5);
}

TEST(FlowModel, DepartureFreesBandwidth) {
  // A 1000 B and B 3000 B share one link: 0.5 each until A is done at 2000 ns (B has sent 1000);
  // then B alone at 1 byte/ns sends its 2000 left by 4000 ns. Reallocations: start, A leaves,
  // B leaves = 3.
  const auto g = line(1, 0.0);
  const auto r = simulate_flows(g, {flow({0}, 1000), flow({0}, 3000)});
  EXPECT_DOUBLE_EQ(r.finish_ns[0], 2000.0);
  EXPECT_DOUBLE_EQ(r.finish_ns[1], 4000.0);
  EXPECT_EQ(r.reallocations, 3);
}

TEST(FlowModel, LaterArrivalSlowsTheFirst) {
  // A 2000 B starts at 0 alone (1 B/ns); B 500 B arrives at 1000 ns: A has 1000 left, both 0.5;
  // B done at 2000 ns, A has 500 left -> alone -> 2500 ns.
  const auto g = line(1, 0.0);
  const auto r = simulate_flows(g, {flow({0}, 2000), flow({0}, 500, 1000.0)});
  EXPECT_DOUBLE_EQ(r.finish_ns[1], 2000.0);
  EXPECT_DOUBLE_EQ(r.finish_ns[0], 2500.0);
}

TEST(FlowModel, PerHopLatencyIsAdded) {
  // 1000 B over 2 hops at 1 B/ns: last byte at 1000 ns, + 2 x 1000 ns latency = 3000 ns.
  const auto g = line(2, 1000.0);
  const auto r = simulate_flows(g, {flow({0, 1}, 1000)});
  EXPECT_DOUBLE_EQ(r.finish_ns[0], 3000.0);
}

TEST(FlowModel, DependencyCycleIsAnInputError) {
  const auto g = line(1, 0.0);
  auto a = flow({0}, 10), b = flow({0}, 10);
  a.after = {1};
  b.after = {0};
  EXPECT_THROW(simulate_flows(g, {a, b}), chorus::InputError);
  EXPECT_THROW(simulate_flows(g, {flow({3}, 10)}), chorus::InputError);  // link out of range
}

TEST(FlowModel, RingAllReduceOnARing) {
  // Ring of n = 4 with links i -> i+1 of 8 Gbps (1 B/ns), latency L = 1000 ns, bytes = 4000:
  // 2(n-1) = 6 steps of 1000 B -> 6 x (1000 + 1000) = 12000 ns
  // = 2(n-1)/n * bytes/B + 2(n-1) L = 6/4 * 4000 + 6 * 1000.
  GraphNetwork g;
  g.servers = 4;
  for (int i = 0; i < 4; ++i) g.add_link(i, (i + 1) % 4, 8.0, 1000.0);
  Router router(g);
  std::vector<Flow> flows;
  const int last = ring_allreduce(router, {0, 1, 2, 3}, 4000.0, 0.0, flows);
  const auto r = simulate_flows(g, flows);
  EXPECT_DOUBLE_EQ(r.finish_ns[static_cast<std::size_t>(last)], 12000.0);
  EXPECT_DOUBLE_EQ(r.makespan_ns, 12000.0);
  // Traffic matrix: server 0 sends 6 chunks of 1000 B to server 1, nothing to server 3.
  const auto m = traffic_matrix(4, flows);
  EXPECT_DOUBLE_EQ(m[0][1], 6000.0);
  EXPECT_DOUBLE_EQ(m[0][3], 0.0);
  std::ostringstream csv;
  write_matrix_csv(csv, m);
  EXPECT_EQ(csv.str().substr(0, 14), "src,0,1,2,3\n0,");
}

TEST(FlowModel, MaxMinDefinitionHoldsOnRandomInstances) {
  // Definition of max-min fairness: rates are feasible and every flow has a bottleneck link that
  // is saturated and on which no flow has a larger rate.
  chorus::Rng rng(42);
  for (int trial = 0; trial < 300; ++trial) {
    const int nl = static_cast<int>(rng.uniform_int(1, 6));
    const int nflows = static_cast<int>(rng.uniform_int(1, 8));
    std::vector<double> cap(static_cast<std::size_t>(nl));
    for (auto& c : cap) c = rng.uniform(0.5, 4.0);
    std::vector<Path> owned(static_cast<std::size_t>(nflows));
    for (auto& p : owned) {
      for (int l = 0; l < nl; ++l)
        if (rng.uniform01() < 0.4) p.push_back(l);
      if (p.empty()) p.push_back(static_cast<int>(rng.uniform_int(0, nl - 1)));
    }
    std::vector<const Path*> paths;
    for (const auto& p : owned) paths.push_back(&p);
    const auto rate = max_min_rates(cap, paths);
    std::vector<double> load(static_cast<std::size_t>(nl), 0.0), top(static_cast<std::size_t>(nl), 0.0);
    for (int f = 0; f < nflows; ++f)
      for (int l : owned[static_cast<std::size_t>(f)]) {
        load[static_cast<std::size_t>(l)] += rate[static_cast<std::size_t>(f)];
        top[static_cast<std::size_t>(l)] = std::max(top[static_cast<std::size_t>(l)], rate[static_cast<std::size_t>(f)]);
      }
    for (int l = 0; l < nl; ++l) EXPECT_LE(load[static_cast<std::size_t>(l)], cap[static_cast<std::size_t>(l)] + 1e-9);
    for (int f = 0; f < nflows; ++f) {
      const double x = rate[static_cast<std::size_t>(f)];
      EXPECT_GT(x, 0.0);
      bool bottleneck = false;
      for (int l : owned[static_cast<std::size_t>(f)]) {
        const auto lu = static_cast<std::size_t>(l);
        if (load[lu] >= cap[lu] - 1e-9 && x >= top[lu] - 1e-9) bottleneck = true;
      }
      EXPECT_TRUE(bottleneck) << "trial " << trial << " flow " << f;
    }
  }
}

TEST(FlowModel, ExpanderRingAllReduceConservesBytes) {
  // On any fabric every byte of a ring all-reduce crosses each link of its path once:
  // sum of link bytes = sum over flows of bytes x hops.
  const auto g = expander(16, 4, 100.0, 3);
  Router router(g);
  std::vector<int> order(16);
  for (int i = 0; i < 16; ++i) order[static_cast<std::size_t>(i)] = i;
  std::vector<Flow> flows;
  ring_allreduce(router, order, 16e6, 0.0, flows);
  const auto r = simulate_flows(g, flows);
  double expect = 0.0, got = 0.0;
  for (const auto& f : flows) expect += f.bytes * static_cast<double>(f.path.size());
  for (double b : r.link_bytes) got += b;
  EXPECT_NEAR(got, expect, 1e-6 * expect);
}

TEST(FlowModel, OversubscribedUplinkHalvesCrossTorTraffic) {
  // 8 servers, 4 per ToR, NICs 100 Gbps = 12.5 B/ns; each ToR uplink 4 x 100 / 2 = 200 Gbps = 25 B/ns.
  // Servers 0..3 each send 25000 B to servers 4..7: the 4 flows share ToR 0's uplink -> 6.25 B/ns
  // each (the NIC allows 12.5) -> last byte at 4000 ns; 4 hops x 1 us -> 8000 ns.
  // On the ideal Fat-tree of the same NICs: 25000 / 12.5 = 2000 ns + 2 hops -> 4000 ns.
  for (bool oversub : {true, false}) {
    const auto g = oversub ? oversubscribed_fat_tree(8, 4, 100.0) : fat_tree(8, 100.0);
    Router router(g);
    std::vector<Flow> flows;
    for (int s = 0; s < 4; ++s) point_to_point(router, s, s + 4, 25000.0, 0.0, flows);
    const auto r = simulate_flows(g, flows);
    for (double t : r.finish_ns) EXPECT_DOUBLE_EQ(t, oversub ? 8000.0 : 4000.0) << (oversub ? "oversub" : "ideal");
  }
}
