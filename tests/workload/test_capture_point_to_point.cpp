// Point-to-point operations in a capture's window (docs/capture.md, "Point-to-point"): the
// hand-made two-stage pipeline of tests/data/capture (make_captures.py: rank 0 runs an mm of
// 1000 us and sends 1 MiB to rank 1, which receives it, runs its mm of 1000 us and sends 256 KiB
// back), imported with its sends and recvs matched between the ranks, simulated, scaled; every
// expected value derived by hand.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/error.h"
#include "net/network_yaml.h"
#include "sim/dag_executor.h"
#include "workload/capture/capture_import.h"
#include "workload/capture/point_to_point.h"
#include "tests/common/input_error_of.h"

namespace chorus::workload::capture::point_to_point_tests {
namespace {

using chorus::test_support::input_error_of;

const std::string kData = CHORUS_TEST_DATA_DIR "/capture/";

// Dimensions of switches, dimension 0 10 GB/s, the next 5 GB/s, 500 ns a step.
net::Network switches(const std::vector<int>& sizes) {
  std::string yaml = "name: n\ndims:\n";
  for (std::size_t d = 0; d < sizes.size(); ++d)
    yaml += "  - {kind: switch, size: " + std::to_string(sizes[d]) + ", link_bandwidth_GBps: " + (d == 0 ? "10" : "5") +
            ", links_per_npu: 1, latency_ns: 500}\n";
  return net::parse_network_yaml(yaml, "n");
}

Dag import(const std::string& name, const net::Network& network, int rank = 0, int world = 0) {
  ImportOptions o;
  o.rank = rank;
  o.world = world;
  return import_capture(read_manifest(kData + name), network, o);
}

sim::DagResult simulate(const Dag& dag, const net::Network& network) {
  sim::WorkloadSimOptions o;
  o.scheduler = sched::parse_scheduler("baseline");
  o.chunks_per_collective = 1;
  return sim::simulate_workload(dag, network, o).result;
}

// A transfer on a switch dimension: one step of its latency and the bytes at the link's 10 GB/s
// (10 bytes/ns): 1 MiB 500 + 104857.6 ns, 256 KiB 500 + 26214.4 ns.
constexpr double kForwardNs = 500 + 1048576 / 10.0, kBackNs = 500 + 262144 / 10.0;
// The pipeline's step: rank 0's mm, the 1 MiB to rank 1, rank 1's mm, the 256 KiB back.
constexpr double kStepNs = 1e6 + kForwardNs + 1e6 + kBackNs;  // 2132072 ns

TEST(CapturePointToPoint, SendsAndRecvsAreNodesWithTheirPeerSizeAndDimension) {
  for (int rank : {0, 1}) {
    const Dag dag = import("p2p2", switches({2}), rank);
    std::vector<const Node*> p2p;
    for (const auto& n : dag.nodes)
      if (n.kind == NodeKind::kComm) p2p.push_back(&n);
    ASSERT_EQ(p2p.size(), 2u) << rank;
    for (const auto* n : p2p) {
      EXPECT_EQ(n->comm, CommKind::kPointToPoint);
      EXPECT_EQ(n->peer, 1 - rank);
      EXPECT_EQ(n->dims, (std::vector<int>{0}));
    }
    // rank 0: send 1 MiB, recv 256 KiB; rank 1: recv 1 MiB, send 256 KiB
    EXPECT_EQ(p2p[0]->op, rank == 0 ? CollectiveKind::kSend : CollectiveKind::kRecv);
    EXPECT_EQ(p2p[1]->op, rank == 0 ? CollectiveKind::kRecv : CollectiveKind::kSend);
    EXPECT_EQ(p2p[0]->bytes, 1048576);
    EXPECT_EQ(p2p[1]->bytes, 262144);
  }
}

TEST(CapturePointToPoint, APipelineStepIsBothStagesComputeAndBothTransfers) {
  // Seen from either rank: the recv waits for the peer's mm (the slowest rank's stretch between
  // the two transfers), so the step is the whole pipeline's, not one rank's compute.
  for (int rank : {0, 1}) {
    const auto net = switches({2});
    const auto r = simulate(import("p2p2", net, rank), net);
    EXPECT_NEAR(r.total_ns, kStepNs, 1e-9 * kStepNs) << rank;
    EXPECT_DOUBLE_EQ(r.compute_ns, 2e6) << rank;  // its mm and the wait for the other's
    EXPECT_NEAR(r.exposed_comm_ns, kForwardNs + kBackNs, 1e-6) << rank;
  }
}

TEST(CapturePointToPoint, ScaledThePairIsCopiedAndKeepsItsDimension) {
  // --world 4 on 2 x 2: copy 1's pair is ranks 2 and 3, NPUs (0,1) and (1,1): dimension 0 again.
  const auto net = switches({2, 2});
  const Dag dag = import("p2p2", net, 0, 4);
  for (const auto& n : dag.nodes)
    if (n.kind == NodeKind::kComm) {
      EXPECT_EQ(n.dims, (std::vector<int>{0}));
    }
  EXPECT_NEAR(simulate(dag, net).total_ns, kStepNs, 1e-9 * kStepNs);
  // The capture's ranks 0 and 2 of a 4-rank capture on 2 x 2: dimension 1; scaled to 8 on 2 x 2 x 2,
  // copy 1's 4 and 6 too.
  EXPECT_EQ(pair_dim(0, 2, 4, 4, switches({2, 2}), "t"), 1);
  EXPECT_EQ(pair_dim(0, 2, 4, 8, switches({2, 2, 2}), "t"), 1);
  // A 4-rank capture's pair 0, 1 at 8 ranks on 4 x 2: copy 1's 4 and 5 are (0,1) and (1,1): dimension 0.
  EXPECT_EQ(pair_dim(0, 1, 4, 8, switches({4, 2}), "t"), 0);
}

TEST(CapturePointToPoint, UnmatchedSendsAndRecvsAreRefusedNamingTheRankThePeerAndTheOrder) {
  auto msg = input_error_of([] { import("p2p2_unmatched", switches({2})); });
  EXPECT_NE(msg.find("comm.0.jsonl: rank 0: recv 2 (line 3)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("its message 1 from rank 1 (262144 bytes) is never sent"), std::string::npos) << msg;
  msg = input_error_of([] { import("p2p2_sizes", switches({2})); });
  EXPECT_NE(msg.find("rank 0: send 1 (line 2)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is 1048576 bytes, but rank 1's recv 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("524288 bytes"), std::string::npos) << msg;
  // Scaled to 6 ranks on 3 x 2 (NPU i at (i % 3, i / 3)): copy 1's pair, ranks 2 and 3, is (2,0)
  // and (0,1): two dimensions.
  const auto ring_by_switch = net::parse_network_yaml(
      "name: t\ndims:\n  - {kind: ring, size: 3, link_bandwidth_GBps: 10, links_per_npu: 2, latency_ns: 500}\n"
      "  - {kind: switch, size: 2, link_bandwidth_GBps: 5, links_per_npu: 1, latency_ns: 500}\n",
      "t");
  msg = input_error_of([&] { import("p2p2", ring_by_switch, 0, 6); });
  EXPECT_NE(msg.find("ranks 2 and 3 differ in dimensions 0,1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 0: send 1"), std::string::npos) << msg;
}

}  // namespace
}  // namespace chorus::workload::capture::point_to_point_tests
