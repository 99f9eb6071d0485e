// The DAG executor on hand-computable DAGs: every expected time below is worked out by hand
// from the network (one fully-connected dimension of 2 NPUs at 8 Gb/s = 1 byte/ns) and the
// fixed compute durations.
#include <gtest/gtest.h>

#include "core/error.h"
#include "sim/analytical_network.h"
#include "sim/dag_executor.h"
#include "sim/ideal_network.h"
#include "tests/common/hand_timelines.h"

namespace chorus {
namespace {

using workload::CommGroup;
using workload::Dag;
using workload::Node;
using workload::NodeKind;

using test_support::pair_network;
using test_support::run;

int compute(Dag& dag, double ns, std::vector<int> deps, workload::ComputeKind kind = workload::ComputeKind::kForward) {
  Node n;
  n.name = "c" + std::to_string(dag.nodes.size());
  n.kind = NodeKind::kCompute;
  n.compute = kind;
  n.duration_ns = ns;
  n.deps = std::move(deps);
  return dag.add(n);
}

int allreduce(Dag& dag, double bytes, std::vector<int> deps, CommGroup group = CommGroup::kDataParallel) {
  Node n;
  n.name = "ar" + std::to_string(dag.nodes.size());
  n.kind = NodeKind::kComm;
  n.op = CollectiveKind::kAllReduce;
  n.bytes = bytes;
  n.dims = {0};
  n.group = group;
  n.deps = std::move(deps);
  return dag.add(n);
}

TEST(DagExecutor, AChainRunsItsNodesOneAfterAnother) {
  Dag dag;
  const int c1 = compute(dag, 100, {});
  const int ar = allreduce(dag, 1000, {c1});
  compute(dag, 50, {ar});
  const auto r = run(dag, pair_network()).result;
  // 100 compute, then the all-reduce 100..1100 (500 + 500), then 50 compute.
  EXPECT_DOUBLE_EQ(r.total_ns, 1150);
  EXPECT_DOUBLE_EQ(r.compute_ns, 150);
  EXPECT_DOUBLE_EQ(r.exposed_comm_ns, 1000);
  EXPECT_DOUBLE_EQ(r.exposed_dp_comm_ns, 1000);
  EXPECT_DOUBLE_EQ(r.exposed_mp_comm_ns, 0);
  EXPECT_DOUBLE_EQ(r.nodes[1].start_ns, 100);
  EXPECT_DOUBLE_EQ(r.nodes[1].end_ns, 1100);
  // 1000 bytes sent in 1000 ns of communication on 8 Gb/s: 100 %.
  EXPECT_DOUBLE_EQ(r.bytes_per_npu, 1000);
  EXPECT_DOUBLE_EQ(r.comm_active_ns, 1000);
  EXPECT_DOUBLE_EQ(r.avg_bw_utilization, 1.0);
}

TEST(DagExecutor, LatencyAddsOncePerStage) {
  Dag dag;
  allreduce(dag, 1000, {});
  // RS: 100 + 500, AG: 100 + 500.
  EXPECT_DOUBLE_EQ(run(dag, pair_network(100)).result.total_ns, 1200);
}

TEST(DagExecutor, ForkThenJoinWaitsForTheSlowerBranch) {
  Dag dag;
  const int c1 = compute(dag, 100, {});
  const int ar = allreduce(dag, 1000, {c1});  // 100..1100
  const int c2 = compute(dag, 300, {c1});     // 100..400
  compute(dag, 10, {ar, c2});                 // 1100..1110
  const auto r = run(dag, pair_network()).result;
  EXPECT_DOUBLE_EQ(r.total_ns, 1110);
  EXPECT_DOUBLE_EQ(r.compute_ns, 410);
  EXPECT_DOUBLE_EQ(r.exposed_comm_ns, 700);
  EXPECT_DOUBLE_EQ(r.nodes[3].start_ns, 1100);
}

TEST(DagExecutor, ComputeHidesCommunication) {
  Dag dag;
  const int c1 = compute(dag, 100, {});
  const int ar = allreduce(dag, 500, {c1});  // 100..600
  const int c2 = compute(dag, 800, {c1});    // 100..900
  compute(dag, 10, {ar, c2});                // 900..910
  for (const char* s : {"baseline", "themis-fifo", "themis-scf", "ideal"}) {
    const auto r = run(dag, pair_network(), s).result;
    EXPECT_DOUBLE_EQ(r.total_ns, 910) << s;
    EXPECT_DOUBLE_EQ(r.exposed_comm_ns, 0) << s;
  }
}

TEST(DagExecutor, ComputeStreamRunsOneNodeAtATime) {
  Dag dag;
  compute(dag, 100, {});
  compute(dag, 200, {});
  compute(dag, 10, {0, 1});
  const auto r = run(dag, pair_network()).result;
  EXPECT_DOUBLE_EQ(r.total_ns, 310);
  EXPECT_DOUBLE_EQ(r.nodes[1].start_ns, 100);  // program order
  EXPECT_DOUBLE_EQ(r.exposed_comm_ns, 0);
}

TEST(DagExecutor, ConcurrentCollectivesShareTheDimension) {
  // Two 1000-byte all-reduces issued together on one dimension, one chunk each. FIFO:
  // RS1 0..500, RS2 500..1000 (arrived at 0, before AG1 at 500), AG1 1000..1500, AG2 1500..2000.
  Dag dag;
  const int a = allreduce(dag, 1000, {});
  const int b = allreduce(dag, 1000, {});
  compute(dag, 0, {a, b});
  const auto r = run(dag, pair_network()).result;
  EXPECT_DOUBLE_EQ(r.nodes[0].end_ns, 1500);
  EXPECT_DOUBLE_EQ(r.nodes[1].end_ns, 2000);
  EXPECT_DOUBLE_EQ(r.total_ns, 2000);
  EXPECT_DOUBLE_EQ(r.exposed_comm_ns, 2000);
  // Chunking does not change a bandwidth-bound dimension's total: still 2000 ns.
  EXPECT_DOUBLE_EQ(run(dag, pair_network(), "baseline", 8).result.total_ns, 2000);
}

TEST(DagExecutor, SmallestChunkFirstAcrossCollectives) {
  // Two 4000-byte all-reduces and a 400-byte one issued together, one chunk each (stage
  // bytes 2000, 2000, 200). A transfer starts as soon as the dimension is free, so RS1 runs
  // 0..2000 under both policies. Then
  //  FIFO (arrival order): RS2 2000..4000, RS3 4000..4200, AG1 4200..6200, AG2 6200..8200,
  //        AG3 8200..8400;
  //  SCF (bytes, then arrival): RS3 2000..2200, RS2 2200..4200 (ties AG1 on bytes, arrived
  //        earlier), AG3 4200..4400, AG1 4400..6400, AG2 6400..8400.
  Dag dag;
  allreduce(dag, 4000, {});
  allreduce(dag, 4000, {});
  allreduce(dag, 400, {});
  const auto fifo = run(dag, pair_network(), "themis-fifo").result;
  EXPECT_DOUBLE_EQ(fifo.nodes[0].end_ns, 6200);
  EXPECT_DOUBLE_EQ(fifo.nodes[1].end_ns, 8200);
  EXPECT_DOUBLE_EQ(fifo.nodes[2].end_ns, 8400);
  const auto scf = run(dag, pair_network(), "themis-scf").result;
  EXPECT_DOUBLE_EQ(scf.nodes[2].end_ns, 4400);
  EXPECT_DOUBLE_EQ(scf.nodes[0].end_ns, 6400);
  EXPECT_DOUBLE_EQ(scf.nodes[1].end_ns, 8400);
}

TEST(DagExecutor, ExposedTimeIsBlamedOnTheGroupThatMadeComputeWait) {
  Dag dag;
  const int c1 = compute(dag, 100, {});
  const int mp = allreduce(dag, 1000, {c1}, CommGroup::kModelParallel);  // 100..1100
  const int c2 = compute(dag, 100, {mp});                                // 1100..1200
  const int dp = allreduce(dag, 2000, {c2}, CommGroup::kDataParallel);   // 1200..3200
  const int opt = compute(dag, 0, {dp}, workload::ComputeKind::kOptimizer);
  compute(dag, 100, {opt});  // waits behind a zero-time optimizer node: still blamed on dp
  const auto r = run(dag, pair_network()).result;
  EXPECT_DOUBLE_EQ(r.total_ns, 3300);
  EXPECT_DOUBLE_EQ(r.exposed_mp_comm_ns, 1000);
  EXPECT_DOUBLE_EQ(r.exposed_dp_comm_ns, 2000);
  EXPECT_DOUBLE_EQ(r.compute_ns + r.exposed_comm_ns, r.total_ns);
}

TEST(DagExecutor, TrailingCommunicationIsExposed) {
  Dag dag;
  const int c1 = compute(dag, 100, {});
  allreduce(dag, 1000, {c1}, CommGroup::kModelParallel);
  const auto r = run(dag, pair_network()).result;
  EXPECT_DOUBLE_EQ(r.total_ns, 1100);
  EXPECT_DOUBLE_EQ(r.exposed_mp_comm_ns, 1000);
}

TEST(DagExecutor, IdealUsesEveryDimensionOfTheGroup) {
  // Two dimensions (2 x 4 NPUs) at 8 and 24 Gb/s (1 and 3 bytes/ns): an 8000-byte all-reduce
  // must send 2 x 7/8 x 8000 = 14000 bytes at 4 bytes/ns = 3500 ns.
  net::Network n;
  n.name = "two";
  n.dims.push_back(net::Dimension{net::DimKind::kFullyConnected, 2, 8.0, 1, 0});
  n.dims.push_back(net::Dimension{net::DimKind::kFullyConnected, 4, 24.0, 1, 0});
  Dag dag;
  Node ar;
  ar.kind = NodeKind::kComm;
  ar.bytes = 8000;
  ar.dims = {0, 1};
  dag.add(ar);
  EXPECT_DOUBLE_EQ(run(dag, n, "ideal").result.total_ns, 3500);
  // On dimension 1 alone (4 NPUs, 3 bytes/ns): 2 x 3/4 x 8000 / 3 = 4000 ns.
  dag.nodes[0].dims = {1};
  EXPECT_DOUBLE_EQ(run(dag, n, "ideal").result.total_ns, 4000);
  // ...and the analytical model agrees for a single dimension: direct RS sends 3/4 x 8000 =
  // 6000 bytes (2000 ns), AG sends 3 x 2000 = 6000 bytes (2000 ns).
  EXPECT_DOUBLE_EQ(run(dag, n, "baseline").result.total_ns, 4000);
}

TEST(DagExecutor, IdealRunsTheShortestRemainingFirst) {
  // Ideal on the pair network: an all-reduce of S bytes takes 2 x 1/2 x S / (1 byte/ns) = S ns.
  // A 4000-byte one from 0; a 400-byte one issued at 100 preempts it: small 100..500, big
  // resumes with 3900 ns left, 500..4400.
  Dag dag;
  const int big = allreduce(dag, 4000, {});
  const int c = compute(dag, 100, {});
  const int small = allreduce(dag, 400, {c});
  const auto r = run(dag, pair_network(), "ideal").result;
  EXPECT_DOUBLE_EQ(r.nodes[static_cast<size_t>(small)].end_ns, 500);
  EXPECT_DOUBLE_EQ(r.nodes[static_cast<size_t>(big)].end_ns, 4400);
  EXPECT_DOUBLE_EQ(r.bytes_per_npu, 4400);
  EXPECT_DOUBLE_EQ(r.comm_active_ns, 4400);
}

TEST(DagExecutor, EmptyGroupCommunicationIsFree) {
  Dag dag;
  const int c1 = compute(dag, 100, {});
  Node ar;
  ar.kind = NodeKind::kComm;
  ar.bytes = 1e9;
  ar.deps = {c1};  // no dimensions: a group of one NPU
  const int a = dag.add(ar);
  compute(dag, 100, {a});
  EXPECT_DOUBLE_EQ(run(dag, pair_network()).result.total_ns, 200);
}

int p2p(Dag& dag, double bytes, int dim, std::vector<int> deps) {
  Node n;
  n.name = "p2p" + std::to_string(dag.nodes.size());
  n.kind = NodeKind::kComm;
  n.comm = workload::CommKind::kPointToPoint;
  n.bytes = bytes;
  n.dims = {dim};
  n.group = CommGroup::kModelParallel;
  n.deps = std::move(deps);
  return dag.add(n);
}

// Point to point: one step of latency, then the bytes at the bandwidth of the links to the
// peer. Three dimensions of 8 Gb/s links (1 byte/ns each), 100 ns step latency:
//   switch of 4, 2 links per NPU: both links reach the switch, 2 bytes/ns;
//   fully connected of 4, 3 links per NPU: one link per peer, 1 byte/ns;
//   ring of 4, 2 links per NPU: one link towards a neighbour, 1 byte/ns.
TEST(DagExecutor, PointToPointUsesThePeersLinks) {
  net::Network n;
  n.name = "three";
  n.dims.push_back(net::Dimension{net::DimKind::kSwitch, 4, 8.0, 2, 100});
  n.dims.push_back(net::Dimension{net::DimKind::kFullyConnected, 4, 8.0, 3, 100});
  n.dims.push_back(net::Dimension{net::DimKind::kRing, 4, 8.0, 2, 100});
  const double want[3] = {100 + 2000.0 / 2, 100 + 2000.0, 100 + 2000.0};
  for (int d = 0; d < 3; ++d) {
    Dag dag;
    p2p(dag, 2000, d, {});
    EXPECT_DOUBLE_EQ(run(dag, n).result.total_ns, want[d]) << "dimension " << d;
    // The ideal: the same bandwidth, no latency.
    EXPECT_DOUBLE_EQ(run(dag, n, "ideal").result.total_ns, want[d] - 100) << "dimension " << d;
  }
}

TEST(DagExecutor, PointToPointSharesTheDimensionWithCollectives) {
  // On the 2-NPU pair (1 byte/ns, no latency): an all-reduce of 1000 B (its RS and AG stages
  // 500 ns each) and a 300 B transfer issued together; the dimension serves one at a time in
  // arrival order: RS 0..500, P2P 500..800, AG 800..1300.
  Dag dag;
  const int ar = allreduce(dag, 1000, {});
  const int pp = p2p(dag, 300, 0, {});
  const auto r = run(dag, pair_network()).result;
  EXPECT_DOUBLE_EQ(r.nodes[static_cast<std::size_t>(pp)].end_ns, 800);
  EXPECT_DOUBLE_EQ(r.nodes[static_cast<std::size_t>(ar)].end_ns, 1300);
  EXPECT_DOUBLE_EQ(r.bytes_per_npu, 1300);
}

TEST(DagExecutor, BadDagsAreInputErrors) {
  Dag dag;
  compute(dag, 1, {});
  compute(dag, 1, {1});  // depends on itself
  EXPECT_THROW(run(dag, pair_network()), InputError);
  Dag dag2;
  allreduce(dag2, 10, {});
  dag2.nodes[0].dims = {3};  // no such dimension
  EXPECT_THROW(run(dag2, pair_network()), InputError);
  Dag dag3;
  compute(dag3, -5, {});
  dag3.nodes[0].duration_ns = -1;
  dag3.nodes[0].flops = -1;
  EXPECT_THROW(run(dag3, pair_network()), InputError);
}

}  // namespace
}  // namespace chorus
