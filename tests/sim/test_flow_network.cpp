// The training DAG on graph fabrics through the flow-level model (sim/flow_network.h), and the
// flow engine used online. Every expected time is worked out by hand in the comments.
// Units: 8 Gbit/s links carry 1 byte/ns; the default per-hop latency is 1000 ns.
#include <gtest/gtest.h>

#include "core/error.h"
#include "net/graph/fabrics.h"
#include "sim/flow/flow_model.h"
#include "sim/flow_network.h"
#include "workload/parallelism.h"

namespace chorus {
namespace {

// Servers 0 and 1 joined by one 8 Gb/s link (1 B/ns), and a flow over it.
net::GraphNetwork one_link(double latency_ns) {
  net::GraphNetwork g;
  g.servers = 2;
  g.add_link(0, 1, 8.0, latency_ns);
  return g;
}
sim::flow::Flow on_link0(double bytes) {
  sim::flow::Flow f;
  f.path = {0};
  f.bytes = bytes;
  return f;
}

using workload::Dag;
using workload::Node;
using workload::NodeKind;

net::Network logical(std::vector<int> sizes) {
  net::Network n;
  n.name = "logical";
  for (int s : sizes) n.dims.push_back(net::Dimension{net::DimKind::kRing, s, 100.0, 1, 0.0});
  return n;
}

int compute_node(Dag& dag, double ns, std::vector<int> deps) {
  Node n;
  n.name = "c" + std::to_string(dag.nodes.size());
  n.kind = NodeKind::kCompute;
  n.duration_ns = ns;
  n.deps = std::move(deps);
  return dag.add(n);
}

int comm(Dag& dag, CollectiveKind op, double bytes, std::vector<int> dims, std::vector<int> deps,
         workload::CommKind kind = workload::CommKind::kCollective) {
  Node n;
  n.name = "m" + std::to_string(dag.nodes.size());
  n.kind = NodeKind::kComm;
  n.comm = kind;
  n.op = op;
  n.bytes = bytes;
  n.dims = std::move(dims);
  n.deps = std::move(deps);
  return dag.add(n);
}

// A directed ring 0 -> 1 -> ... -> n-1 -> 0 of 8 Gb/s links (optionally also the reverse ring).
net::GraphNetwork ring(int n, bool both_ways = false) {
  net::GraphNetwork g;
  g.name = "ring";
  g.servers = n;
  for (int i = 0; i < n; ++i) g.add_link(i, (i + 1) % n, 8.0);
  if (both_ways)
    for (int i = 0; i < n; ++i) g.add_link((i + 1) % n, i, 8.0);
  return g;
}

sim::FabricRun run(const Dag& dag, const net::Network& l, const net::GraphNetwork& g, sim::FlowNetworkOptions o = {}) {
  return sim::simulate_workload(dag, l, g, workload::ComputeModel{}, std::move(o));
}

TEST(FlowNetwork, RingAllReduceAfterCompute) {
  // 500 ns of compute, then an all-reduce of 4000 B over 4 servers on the directed ring:
  // 2(n-1) = 6 steps of 1000 B, each 1000 ns of sending + 1000 ns latency = 12000 ns.
  Dag dag;
  const int c = compute_node(dag, 500, {});
  comm(dag, CollectiveKind::kAllReduce, 4000, {0}, {c});
  const auto r = run(dag, logical({4}), ring(4));
  EXPECT_DOUBLE_EQ(r.result.total_ns, 12500.0);
  EXPECT_DOUBLE_EQ(r.result.exposed_comm_ns, 12000.0);
  // Each server sent 6 chunks of 1000 B to its successor.
  EXPECT_DOUBLE_EQ(r.result.bytes_per_npu, 6000.0);
  EXPECT_DOUBLE_EQ(r.traffic[0][1], 6000.0);
  EXPECT_DOUBLE_EQ(r.traffic[1][0], 0.0);
}

TEST(FlowNetwork, ReduceScatterAndAllGatherTakeHalfTheSteps) {
  // n - 1 = 3 steps of 1000 B each: 3 x 2000 = 6000 ns, one after the other: 12000.
  Dag dag;
  const int rs = comm(dag, CollectiveKind::kReduceScatter, 4000, {0}, {});
  comm(dag, CollectiveKind::kAllGather, 4000, {0}, {rs});
  const auto r = run(dag, logical({4}), ring(4));
  EXPECT_DOUBLE_EQ(r.result.nodes[0].end_ns, 6000.0);
  EXPECT_DOUBLE_EQ(r.result.total_ns, 12000.0);
}

TEST(FlowNetwork, AllToAllOnAFatTreeSharesTheNics) {
  // 4 servers on one switch, NICs of 8 Gb/s each way. All-to-all of 4000 B: each server sends
  // 1000 B to each of the 3 others at once; 3 flows share each uplink and each downlink, so each
  // gets 1/3 B/ns: 3000 ns, plus 2 hops of 1000 ns = 5000 ns.
  Dag dag;
  comm(dag, CollectiveKind::kAllToAll, 4000, {0}, {});
  const auto r = run(dag, logical({4}), net::fat_tree(4, 8.0));
  EXPECT_DOUBLE_EQ(r.result.total_ns, 5000.0);
  EXPECT_EQ(r.result.nodes[0].end_ns, 5000.0);
}

TEST(FlowNetwork, ACollectiveEndsWithItsSlowestGroup) {
  // Logical 2 x 2; an all-reduce over dimension 0 runs on groups {0, 1} and {2, 3} at once.
  // Links 0 <-> 1 at 8 Gb/s, 2 <-> 3 at 4 Gb/s (0.5 B/ns); 0 <-> 2 keeps the fabric connected.
  // 2000 B over 2 servers: 2 steps of 1000 B. Group {0,1}: 2 x (1000 + 1000) = 4000 ns;
  // group {2,3}: 2 x (2000 + 1000) = 6000 ns. The node ends at 6000.
  net::GraphNetwork g;
  g.name = "two-pairs";
  g.servers = 4;
  g.add_link(0, 1, 8.0);
  g.add_link(1, 0, 8.0);
  g.add_link(2, 3, 4.0);
  g.add_link(3, 2, 4.0);
  g.add_link(0, 2, 8.0);
  g.add_link(2, 0, 8.0);
  Dag dag;
  comm(dag, CollectiveKind::kAllReduce, 2000, {0}, {});
  const auto r = run(dag, logical({2, 2}), g);
  EXPECT_DOUBLE_EQ(r.result.total_ns, 6000.0);
}

TEST(FlowNetwork, PointToPointGoesToTheNextServerAlongItsDimension) {
  // Logical 2 x 2, point-to-point on dimension 1: 0 -> 2, 1 -> 3, 2 -> 0, 3 -> 1 (stride 2).
  Dag dag;
  comm(dag, CollectiveKind::kAllReduce, 3000, {1}, {}, workload::CommKind::kPointToPoint);
  const auto r = run(dag, logical({2, 2}), net::fat_tree(4, 8.0));
  EXPECT_DOUBLE_EQ(r.traffic[0][2], 3000.0);
  EXPECT_DOUBLE_EQ(r.traffic[1][3], 3000.0);
  EXPECT_DOUBLE_EQ(r.traffic[2][0], 3000.0);
  EXPECT_DOUBLE_EQ(r.traffic[0][1], 0.0);
  // One flow per NIC each way: 3000 ns + 2 hops.
  EXPECT_DOUBLE_EQ(r.result.total_ns, 5000.0);
}

TEST(FlowNetwork, PlacementPutsNpusOnServers) {
  // A directed ring of 8 Gb/s links in the order 0 -> 2 -> 1 -> 3 -> 0; each NPU of a logical
  // ring of 4 sends 8000 B to the next NPU (point-to-point on dimension 0).
  net::GraphNetwork g;
  g.name = "ring 0-2-1-3";
  g.servers = 4;
  for (auto [a, b] : {std::pair{0, 2}, {2, 1}, {1, 3}, {3, 0}}) g.add_link(a, b, 8.0);
  Dag dag;
  comm(dag, CollectiveKind::kAllReduce, 8000, {0}, {}, workload::CommKind::kPointToPoint);
  // NPUs 0, 1, 2, 3 on servers 0, 2, 1, 3: every transfer is one link of its own,
  // 8000 ns + 1 hop.
  sim::FlowNetworkOptions o;
  o.placement = {0, 2, 1, 3};
  const auto placed = run(dag, logical({4}), g, o);
  EXPECT_DOUBLE_EQ(placed.result.total_ns, 9000.0);
  EXPECT_DOUBLE_EQ(placed.traffic[0][2], 8000.0);  // NPU 0 -> NPU 1, on server 2
  EXPECT_DOUBLE_EQ(placed.traffic[0][1], 0.0);
  // NPU i on server i: 0 -> 1 goes 0-2-1, 1 -> 2 goes 1-3-0-2, 2 -> 3 goes 2-1-3, 3 -> 0 is
  // direct; every link carries two of them, so each gets 0.5 B/ns: 16000 ns, and the 3-hop
  // transfer ends last, 16000 + 3000.
  EXPECT_DOUBLE_EQ(run(dag, logical({4}), g).result.total_ns, 19000.0);
  // Not a permutation, or the wrong length: named errors.
  o.placement = {0, 0, 1, 2};
  EXPECT_THROW(run(dag, logical({4}), g, o), InputError);
  o.placement = {0, 1, 2};
  EXPECT_THROW(run(dag, logical({4}), g, o), InputError);
}

TEST(FlowNetwork, PlacedGroupsFindTheFabricsRings) {
  // The two rings of RingsOfAGroupShareItsBytes (9000 ns) are found for a group whose NPUs sit
  // on the servers in reverse order: the fabric lists the group by its servers in ascending order.
  Dag dag;
  comm(dag, CollectiveKind::kAllReduce, 4000, {0}, {});
  auto g = ring(4, true);
  g.rings.push_back({{0, 1, 2, 3}, {{0, 1, 2, 3}, {0, 3, 2, 1}}});
  sim::FlowNetworkOptions o;
  o.placement = {3, 2, 1, 0};
  EXPECT_DOUBLE_EQ(run(dag, logical({4}), g, o).result.total_ns, 9000.0);
}

TEST(FlowNetwork, RingsOfAGroupShareItsBytes) {
  // Both directed rings of 4 servers. One ring: 12000 ns (above). Two rings, the forward and
  // the reverse one, each carry 2000 B: 6 steps of 500 B at 1 B/ns on links of their own,
  // 6 x (500 + 1000) = 9000 ns.
  Dag dag;
  comm(dag, CollectiveKind::kAllReduce, 4000, {0}, {});
  auto g = ring(4, true);
  EXPECT_DOUBLE_EQ(run(dag, logical({4}), g).result.total_ns, 12000.0);
  g.rings.push_back({{0, 1, 2, 3}, {{0, 1, 2, 3}, {0, 3, 2, 1}}});
  EXPECT_DOUBLE_EQ(run(dag, logical({4}), g).result.total_ns, 9000.0);
}

TEST(FlowNetwork, ParallelLinksAddCapacity) {
  // Two parallel 8 Gb/s links 0 -> 1 and one link 1 -> 0. Point-to-point of 2000 B on a
  // 2-server dimension: flow 0 sends 0 -> 1 over the merged 16 Gb/s link (2 B/ns: 1000 ns),
  // flow 1 sends 1 -> 0 at 1 B/ns (2000 ns); + 1000 ns latency: the node ends at 3000 ns.
  net::GraphNetwork g;
  g.name = "parallel";
  g.servers = 2;
  g.add_link(0, 1, 8.0);
  g.add_link(0, 1, 8.0);
  g.add_link(1, 0, 8.0);
  Dag dag;
  comm(dag, CollectiveKind::kAllReduce, 2000, {0}, {}, workload::CommKind::kPointToPoint);
  const auto r = run(dag, logical({2}), g);
  ASSERT_EQ(r.fabric.links.size(), 2u);
  EXPECT_DOUBLE_EQ(r.fabric.links[0].gbps, 16.0);
  EXPECT_DOUBLE_EQ(r.flows.send_done_ns[0], 1000.0);
  EXPECT_DOUBLE_EQ(r.flows.send_done_ns[1], 2000.0);
  EXPECT_DOUBLE_EQ(r.result.total_ns, 3000.0);
}

TEST(FlowNetwork, PipelinedRingsNeverLoseToSteppedOnes) {
  // The tests above hold for both ring models (same numbers by hand). On an expander the ring's
  // edges take paths of different lengths that share links, so rates differ between edges: the
  // stepped ring waits for the slowest edge at every step, the pipelined one lets the others
  // finish and leave their bandwidth to it. So pipelined <= stepped, and both >= the bound of
  // the busiest server's bytes at its full out-bandwidth (4 links of 100 Gb/s = 50 B/ns).
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto g = net::expander(16, 4, 100.0, seed);
    Dag dag;
    comm(dag, CollectiveKind::kAllReduce, 16e6, {0}, {});
    sim::FlowNetworkOptions stepped;
    stepped.stepped_rings = true;
    const double p = run(dag, logical({16}), g).result.total_ns;
    const double s = run(dag, logical({16}), g, stepped).result.total_ns;
    EXPECT_LE(p, s * (1 + 1e-12)) << "seed " << seed;
    EXPECT_GE(p, 2.0 * 15 / 16 * 16e6 / 50.0) << "seed " << seed;
  }
  // On the directed ring both give 12000 ns (RingAllReduceAfterCompute).
  Dag dag;
  comm(dag, CollectiveKind::kAllReduce, 4000, {0}, {});
  sim::FlowNetworkOptions stepped;
  stepped.stepped_rings = true;
  EXPECT_DOUBLE_EQ(run(dag, logical({4}), ring(4), stepped).result.total_ns, 12000.0);
  EXPECT_DOUBLE_EQ(run(dag, logical({4}), ring(4)).result.total_ns, 12000.0);
}

// Circuits of 8 Gb/s (1 B/ns) re-planned every `period_ns`, 200 ns to reconfigure; the
// allocation gives each pair with demand one circuit.
sim::FlowNetworkOptions circuits_of_1_byte_per_ns(double period_ns) {
  sim::FlowNetworkOptions o;
  o.reconfiguration.emplace();
  o.reconfiguration->period_ns = period_ns;
  o.reconfiguration->latency_ns = 200;
  o.reconfiguration->circuit_gbps = 8;
  o.reconfiguration->allocate = [](const std::vector<std::tuple<int, int, double>>& demand) {
    std::vector<std::pair<int, int>> circuits;
    for (const auto& [src, dst, bytes] : demand)
      if (bytes > 0) circuits.emplace_back(src, dst);
    return circuits;
  };
  return o;
}

TEST(FlowNetwork, CircuitsAreReconfiguredByDemandAndLinksStopMeanwhile) {
  // Two servers, a full mesh of potential links (0 -> 1, 1 -> 0; 1000 ns latency), circuits of
  // 8 Gb/s (1 B/ns); period 500 ns, reconfiguration 200 ns; the allocation gives each pair with
  // demand one circuit. Point-to-point of 1000 B each way at t = 0.
  // No initial circuits: the flows wait; at 500 the demand (1000 B each way) gets both circuits,
  // the links are down until 700, then each flow sends at 1 B/ns: last byte 1700, + 1000 ns
  // latency = 2700 ns; one reconfiguration of 200 ns.
  // With both circuits from the start: last byte at 1000, done at 2000; at 500 the allocation is
  // the same, so nothing stops.
  Dag dag;
  comm(dag, CollectiveKind::kAllReduce, 1000, {0}, {}, workload::CommKind::kPointToPoint);
  auto o = circuits_of_1_byte_per_ns(500);
  const auto mesh = net::full_mesh(2, 8.0);
  auto r = run(dag, logical({2}), mesh, o);
  EXPECT_DOUBLE_EQ(r.result.total_ns, 2700.0);
  EXPECT_EQ(r.reconfigurations, 1);
  EXPECT_DOUBLE_EQ(r.reconfiguring_ns, 200.0);
  // Each circuit carried 1000 B of the 2000 its 1 B/ns could carry from 700 to 2700 ns.
  EXPECT_DOUBLE_EQ(sim::link_utilization(r).max, 0.5);
  o.reconfiguration->initial = {{0, 1}, {1, 0}};
  r = run(dag, logical({2}), mesh, o);
  EXPECT_DOUBLE_EQ(r.result.total_ns, 2000.0);
  EXPECT_EQ(r.reconfigurations, 0);
  // Only a full mesh can hold circuits.
  EXPECT_THROW(run(dag, logical({3}), ring(3), o), InputError);
}

TEST(FlowNetwork, OnDemandReplansWhenACircuitIdlesPeriodicWaitsForTheBoundary) {
  // Two servers, circuits of 1 B/ns, 1000 ns latency, period 5000 ns, reconfiguration 200 ns; the
  // one circuit at first is 0 -> 1. Point-to-point of 1000 B each way at t = 0: 0 -> 1 sends
  // 0..1000 (done 2000), 1 -> 0 waits.
  // On demand: at 1000 the circuit idles while 1 -> 0 waits: re-plan at once, links down until
  // 1200, 1 -> 0 sends 1200..2200, done 3200.
  // Periodic: nothing until the boundary at 5000: down until 5200, sends 5200..6200, done 7200.
  Dag dag;
  comm(dag, CollectiveKind::kAllReduce, 1000, {0}, {}, workload::CommKind::kPointToPoint);
  auto o = circuits_of_1_byte_per_ns(5000);
  o.reconfiguration->initial = {{0, 1}};
  const auto mesh = net::full_mesh(2, 8.0);
  for (bool on_demand : {true, false}) {
    o.reconfiguration->on_demand = on_demand;
    const auto r = run(dag, logical({2}), mesh, o);
    EXPECT_DOUBLE_EQ(r.result.total_ns, on_demand ? 3200.0 : 7200.0);
    EXPECT_EQ(r.reconfigurations, 1);
  }
}

TEST(FlowNetwork, BadInputIsNamed) {
  Dag dag;
  comm(dag, CollectiveKind::kAllReduce, 4000, {0}, {});
  EXPECT_THROW(run(dag, logical({8}), ring(4)), InputError);  // 8 NPUs, 4 servers
  auto bad = ring(4);
  bad.rings.push_back({{0, 1, 2, 3}, {{0, 1, 2, 2}}});
  try {
    run(dag, logical({4}), bad);
    FAIL() << "a ring that is not a permutation was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a permutation"), std::string::npos) << e.what();
  }
}

TEST(FlowNetwork, FlowsOfANodeAreCountedBeforeItStarts) {
  // 4 servers, both directed rings listed as the group's rings. Counted by hand from
  // sim/flow/traffic.h: all-to-all: a barrier, 4 x 3 flows, a barrier; all-reduce: per ring a
  // barrier, 4 flows, a barrier (pipelined) or a barrier and 6 steps of 4 flows and a barrier
  // (stepped); point-to-point: 4 flows; every node one join more.
  Dag dag;
  const int a2a = comm(dag, CollectiveKind::kAllToAll, 4000, {0}, {});
  const int ar = comm(dag, CollectiveKind::kAllReduce, 4000, {0}, {a2a});
  const int p2p = comm(dag, CollectiveKind::kAllReduce, 4000, {0}, {ar}, workload::CommKind::kPointToPoint);
  auto g = ring(4, true);
  g.rings.push_back({{0, 1, 2, 3}, {{0, 1, 2, 3}, {0, 3, 2, 1}}});
  for (bool stepped : {false, true}) {
    sim::FlowNetworkOptions o;
    o.stepped_rings = stepped;
    const std::size_t all_to_all = 1 + 12 + 1 + 1;
    const std::size_t all_reduce = 2 * (stepped ? 1 + 6 * (4 + 1) : 1 + 4 + 1) + 1;
    const std::size_t point_to_point = 4 + 1;
    const auto l = logical({4});
    sim::FlowNetwork network(g, l, o);
    EXPECT_EQ(network.flows_of(dag.nodes[static_cast<std::size_t>(a2a)]), all_to_all);
    EXPECT_EQ(network.flows_of(dag.nodes[static_cast<std::size_t>(ar)]), all_reduce);
    EXPECT_EQ(network.flows_of(dag.nodes[static_cast<std::size_t>(p2p)]), point_to_point);
    EXPECT_EQ(run(dag, l, g, o).flow_count, all_to_all + all_reduce + point_to_point) << stepped;
  }
  // Logical 2 x 2: an all-to-all over dimension 0 runs on two groups of 2, one over dimension 1
  // of a 1 x 4 network on four groups of one, which send nothing.
  Dag pairs;
  comm(pairs, CollectiveKind::kAllToAll, 4000, {0}, {});
  EXPECT_EQ(run(pairs, logical({2, 2}), net::fat_tree(4, 8.0)).flow_count, 2u * (1 + 2 + 1) + 1);
  const auto l14 = logical({1, 4});
  sim::FlowNetwork single(net::fat_tree(4, 8.0), l14);
  EXPECT_EQ(single.flows_of(pairs.nodes[0]), 1u);
}

TEST(FlowNetwork, LogicalNetworkPutsTheModelParallelGroupFirst) {
  workload::ParallelismConfig p;
  EXPECT_EQ(workload::logical_network(p, 16).shape(), "16");
  p.mp_npus = 4;
  EXPECT_EQ(workload::logical_network(p, 16).shape(), "4x4");
  p.mp_npus = 16;  // the whole job: one dimension
  EXPECT_EQ(workload::logical_network(p, 16).shape(), "16");
  p.mp_npus = 3;  // does not divide 16
  EXPECT_EQ(workload::logical_network(p, 16).shape(), "16");
}

TEST(FlowEngine, BatchToleranceFinishesNearlyDoneFlowsTogether) {
  // One 8 Gb/s link (1 B/ns), no latency; flows of 1000 B and 1000.5 B from t = 0 share it at
  // 0.5 B/ns. Exact: the first sends its last byte at 2000 ns; the second has 0.5 B left, alone
  // at 1 B/ns: 2000.5 ns; 3 reallocations (start, each last byte). With tolerance 1e-3 the
  // second's 0.5 B would take 1 ns at 0.5 B/ns, within 1e-3 x its 2000 ns so far: it leaves the
  // link at 2000 with the first, in one reallocation (2 in all), and its last byte is where its
  // rate of 0.5 B/ns puts it, 2001 ns. Every byte is counted on the link either way.
  const auto g = one_link(0.0);
  std::vector<sim::flow::Flow> flows(2);
  flows[0].path = flows[1].path = {0};
  flows[0].bytes = 1000;
  flows[1].bytes = 1000.5;
  for (double tol : {0.0, 1e-3}) {
    sim::flow::FlowEngine e(g, tol);
    e.flows() = flows;
    e.admit();
    e.run();
    EXPECT_DOUBLE_EQ(e.result().send_done_ns[0], 2000.0);
    EXPECT_DOUBLE_EQ(e.result().send_done_ns[1], tol == 0 ? 2000.5 : 2001.0);
    EXPECT_DOUBLE_EQ(e.result().link_bytes[0], 2000.5);
    EXPECT_EQ(e.result().reallocations, tol == 0 ? 3 : 2);
  }
  EXPECT_THROW(sim::flow::FlowEngine(g, -1e-3), InputError);
  EXPECT_THROW(sim::flow::FlowEngine(g, 1.0), InputError);
}

TEST(FlowEngine, CapacityOverTimeCountsEveryChange) {
  // One 8 Gb/s link (1 B/ns). A 2000 B flow sends 500 B by t = 500, when the link doubles (a
  // second circuit): 1500 B at 2 B/ns, last byte at 1250. The link could carry 1 x 500 + 2 x 750
  // = 2000 B by then: fully used, where the nominal 1 B/ns x 1250 ns would say 1.6.
  const auto g = one_link(0.0);
  sim::flow::FlowEngine e(g);
  e.flows().push_back(on_link0(2000));
  e.admit();
  std::vector<int> done;
  e.step(done);  // the start
  e.advance_to(500.0);
  e.set_capacities({16.0});
  e.run();
  EXPECT_DOUBLE_EQ(e.result().send_done_ns[0], 1250.0);
  EXPECT_DOUBLE_EQ(e.link_capacity_bytes(1250.0)[0], 2000.0);
  EXPECT_DOUBLE_EQ(e.result().link_bytes[0], 2000.0);
}

TEST(FlowEngine, FlowsAddedWhileRunningStartNowOrAfterTheirDependencies) {
  // One 8 Gb/s link, latency 1000 ns. Flow 0 (1000 B) runs alone: last byte 1000, done 2000.
  // At t = 2000 flow 1 (1000 B, no deps) and flow 2 (1000 B, after flow 0) are added: both
  // start at 2000 (flow 0 is complete), share the link: last bytes at 4000, done 5000.
  const auto g = one_link(1000.0);
  sim::flow::FlowEngine e(g);
  auto f = on_link0(1000);
  e.flows().push_back(f);
  e.admit();
  std::vector<int> done;
  while (done.empty()) e.step(done);
  EXPECT_EQ(done, std::vector<int>{0});
  EXPECT_DOUBLE_EQ(e.now_ns(), 2000.0);
  e.flows().push_back(f);
  f.after = {0};
  e.flows().push_back(f);
  e.admit();
  e.run();
  EXPECT_DOUBLE_EQ(e.result().start_ns[1], 2000.0);
  EXPECT_DOUBLE_EQ(e.result().start_ns[2], 2000.0);
  EXPECT_DOUBLE_EQ(e.result().finish_ns[2], 5000.0);
  EXPECT_DOUBLE_EQ(e.result().link_bytes[0], 3000.0);
  EXPECT_DOUBLE_EQ(e.result().link_busy_ns[0], 3000.0);  // sending 0..1000 and 2000..4000
  // A later flow may not depend on itself or on a flow not yet added.
  f.after = {3};
  e.flows().push_back(f);
  EXPECT_THROW(e.admit(), InputError);
}

}  // namespace
}  // namespace chorus
