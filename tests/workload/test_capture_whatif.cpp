// What-ifs from a capture (docs/capture.md, "What-ifs"): the hand-made captures of
// tests/data/capture (make_captures.py: per rank one aten::mm of 1000 us, then an all-reduce of
// 4 MiB on the world, and in pairs4 / irregular4 one of 1 MiB on a sub-group) replicated to a
// larger world, their compute sped up, and simulated; every expected value derived by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "core/error.h"
#include "eval/capture_whatif.h"
#include "net/network_yaml.h"
#include "sim/dag_executor.h"
#include "workload/capture/capture_import.h"
#include "workload/compute_scale.h"
#include "workload/load.h"
#include "tests/common/input_error_of.h"

namespace chorus::workload::capture {
namespace {

using chorus::test_support::input_error_of;

const std::string kData = CHORUS_TEST_DATA_DIR "/capture/";
constexpr double kWorldBytes = 4194304;  // 4 MiB
constexpr double kMmNs = 1000 * 1000;    // the trace's 1000 us

// One switch dimension of `npus` NPUs, 10 GB/s per NPU (one link), 500 ns per step.
net::Network one_switch(int npus) {
  return net::parse_network_yaml("name: sw\ndims:\n  - {kind: switch, size: " + std::to_string(npus) +
                                     ", link_bandwidth_GBps: 10, links_per_npu: 1, latency_ns: 500}\n",
                                 "one_switch");
}

// docs/themis-model.md, Table 1 on a switch (halving-doubling): an all-reduce of m bytes on P NPUs in
// one chunk is a reduce-scatter then an all-gather stage, each log2 P steps of the latency and
// (P-1)/P m bytes at the NPU's bandwidth (10 GB/s = 10 bytes/ns).
double all_reduce_ns(double m, int p) { return 2 * (std::log2(p) * 500 + (p - 1.0) / p * m / 10); }

sim::DagResult simulate(const Dag& dag, const net::Network& network) {
  sim::WorkloadSimOptions o;
  o.scheduler = sched::parse_scheduler("baseline");
  o.chunks_per_collective = 1;
  return sim::simulate_workload(dag, network, o).result;
}

Dag import(const std::string& name, const net::Network& network, int world, std::vector<std::string> grow = {}) {
  ImportOptions o;
  o.world = world;
  o.world_field = "--world";
  o.grow_groups = std::move(grow);
  o.grow_field = "--grow-groups";
  return import_capture(read_manifest(kData + name), network, o);
}

TEST(CaptureWhatIf, ScaledGroupsTileTheCapture) {
  // The world of a 4-rank capture becomes all 8 ranks; a sub-group keeps its size, in each copy.
  EXPECT_EQ(scaled_group({0, 1, 2, 3}, 4, 8), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(scaled_group({2, 3}, 4, 8), (std::vector<int>{2, 3}));
  EXPECT_EQ(scaled_group({2, 3}, 4, 8, 1), (std::vector<int>{6, 7}));
  EXPECT_EQ(scaled_group({1}, 4, 12, 2), (std::vector<int>{9}));
  // On 2 x 4 (dimension 0 fastest) a pair {2k, 2k+1} is dimension 0 in every copy.
  const auto net = net::parse_network_yaml(
      "name: t\ndims:\n  - {kind: switch, size: 2, link_bandwidth_GBps: 10, links_per_npu: 1, latency_ns: 500}\n"
      "  - {kind: switch, size: 4, link_bandwidth_GBps: 10, links_per_npu: 1, latency_ns: 500}\n",
      "t");
  EXPECT_EQ(scaled_group_dims({2, 3}, 4, 8, net, "t"), (std::vector<int>{0}));
  EXPECT_EQ(scaled_group_dims({0, 1, 2, 3}, 4, 8, net, "t"), (std::vector<int>{0, 1}));
  // On one switch of 8 a pair is no whole dimension.
  EXPECT_THROW(scaled_group_dims({0, 1}, 4, 8, one_switch(8), "t"), InputError);
}

TEST(CaptureWhatIf, ADataParallelCaptureScaledToEightRanksRunsTheAllReduceOnEight) {
  for (int world : {4, 8, 16}) {
    const auto net = one_switch(world);
    const Dag dag = import("dp4", net, world);
    int comms = 0;
    for (const auto& n : dag.nodes)
      if (n.kind == NodeKind::kComm) {
        ++comms;
        EXPECT_EQ(n.bytes, kWorldBytes);
        EXPECT_EQ(n.dims, (std::vector<int>{0}));
      }
    EXPECT_EQ(comms, 1);
    // The all-reduce waits for the mm: nothing overlaps, the iteration is the mm then the all-reduce.
    const auto r = simulate(dag, net);
    EXPECT_DOUBLE_EQ(r.compute_ns, kMmNs) << world;
    EXPECT_NEAR(r.exposed_comm_ns, all_reduce_ns(kWorldBytes, world), 1e-6 * all_reduce_ns(kWorldBytes, world))
        << world;
    EXPECT_NEAR(r.total_ns, kMmNs + all_reduce_ns(kWorldBytes, world), 1e-6 * r.total_ns) << world;
  }
}

TEST(CaptureWhatIf, ComputeScaleTwoHalvesComputeExactly) {
  const auto net = one_switch(8);
  Dag fast = import("dp4", net, 8);
  const auto slow = simulate(fast, net);
  scale_compute(fast, 2, "--compute-scale");
  const auto r = simulate(fast, net);
  EXPECT_EQ(r.compute_ns, kMmNs / 2);
  EXPECT_EQ(r.compute_ns, slow.compute_ns / 2);
  // The network is the same (exposed = total - compute: the two differ by the rounding of a subtraction).
  EXPECT_NEAR(r.exposed_comm_ns, slow.exposed_comm_ns, 1e-9 * slow.exposed_comm_ns);
  // A roofline node: its FLOPs and bytes divided, so its time is.
  Dag roof;
  Node n;
  n.flops = 312e12;  // 1 s at 312 TFLOP/s
  n.mem_bytes = 1;
  roof.add(n);
  scale_compute(roof, 4, "x");
  EXPECT_EQ(ComputeModel{}.node_time_ns(roof.nodes[0]), 0.25e9);
  for (double bad : {0.0, -1.0, std::nan("")}) {
    const auto msg = input_error_of([&] { scale_compute(roof, bad, "--compute-scale"); });
    EXPECT_NE(msg.find("--compute-scale"), std::string::npos) << msg;
  }
}

TEST(CaptureWhatIf, ARegularPartitionScalesBySizeAndTiles) {
  // 8 ranks on 2 x 4: the pairs {0,1}, {2,3} of the capture tile to {4,5}, {6,7}: dimension 0.
  const auto net = net::parse_network_yaml(
      "name: t\ndims:\n  - {kind: switch, size: 2, link_bandwidth_GBps: 10, links_per_npu: 1, latency_ns: 500}\n"
      "  - {kind: switch, size: 4, link_bandwidth_GBps: 10, links_per_npu: 1, latency_ns: 500}\n",
      "t");
  const Dag dag = import("pairs4", net, 8);
  std::vector<std::vector<int>> dims;
  std::vector<double> bytes;
  for (const auto& n : dag.nodes)
    if (n.kind == NodeKind::kComm) {
      dims.push_back(n.dims);
      bytes.push_back(n.bytes);
    }
  EXPECT_EQ(dims, (std::vector<std::vector<int>>{{0, 1}, {0}}));
  EXPECT_EQ(bytes, (std::vector<double>{kWorldBytes, 1048576}));
}

TEST(CaptureWhatIf, GrownGroupsAreTheUnionOfTheirImagesInEveryCopy) {
  // hybrid4: tensor-parallel pairs {0,1} (torch/1), {2,3} (torch/2); data-parallel pairs {0,2}
  // (torch/3), {1,3} (torch/4). Copy c holds ranks 4c .. 4c+3. At 8 ranks (2 copies), by hand:
  // the tensor-parallel pairs keep their size, tiled: {0,1}, {4,5}; {2,3}, {6,7}; the data-parallel
  // ones grow: {0,2} u {4,6}, {1,3} u {5,7}.
  EXPECT_EQ(scaled_group({0, 1}, 4, 8, 0), (std::vector<int>{0, 1}));
  EXPECT_EQ(scaled_group({0, 1}, 4, 8, 1), (std::vector<int>{4, 5}));
  EXPECT_EQ(scaled_group({2, 3}, 4, 8, 1), (std::vector<int>{6, 7}));
  EXPECT_EQ(scaled_group({0, 2}, 4, 8, 0, true), (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(scaled_group({1, 3}, 4, 8, 0, true), (std::vector<int>{1, 3, 5, 7}));
  // A grown group is the same in every copy.
  EXPECT_EQ(scaled_group({1, 3}, 4, 8, 1, true), (std::vector<int>{1, 3, 5, 7}));
  // At 16 ranks (4 copies): pairs {0,1}, {4,5}, {8,9}, {12,13} and {2,3}, ..., {14,15}; the
  // data-parallel groups the even and the odd ranks.
  EXPECT_EQ(scaled_group({0, 1}, 4, 16, 2), (std::vector<int>{8, 9}));
  EXPECT_EQ(scaled_group({2, 3}, 4, 16, 3), (std::vector<int>{14, 15}));
  EXPECT_EQ(scaled_group({0, 2}, 4, 16, 0, true), (std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14}));
  EXPECT_EQ(scaled_group({1, 3}, 4, 16, 0, true), (std::vector<int>{1, 3, 5, 7, 9, 11, 13, 15}));
  // The world always grows, named or not.
  EXPECT_EQ(scaled_group({0, 1, 2, 3}, 4, 8, 1, false), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

// 2 x K (dimension 0 fastest): NPU i at (i % 2, i / 2). Dimension 0 20 GB/s and 300 ns a step,
// dimension 1 10 GB/s and 500 ns, so that the two all-reduces' times cannot be mistaken.
net::Network two_by(int k) {
  return net::parse_network_yaml(
      "name: t\ndims:\n  - {kind: switch, size: 2, link_bandwidth_GBps: 20, links_per_npu: 1, latency_ns: 300}\n"
      "  - {kind: switch, size: " +
          std::to_string(k) + ", link_bandwidth_GBps: 10, links_per_npu: 1, latency_ns: 500}\n",
      "t");
}

TEST(CaptureWhatIf, AGrownDataParallelGroupRunsItsAllReduceOnItsNewSize) {
  for (int world : {8, 16}) {
    const auto net = two_by(world / 2);
    const Dag dag = import("hybrid4", net, world, {"torch/3", "torch/4"});
    // The pair {0,1} is dimension 0; the grown {0,2,4,...} the NPUs (0, j): dimension 1, world / 2 NPUs.
    std::vector<int> comms;
    for (int i = 0; i < static_cast<int>(dag.nodes.size()); ++i)
      if (dag.nodes[static_cast<std::size_t>(i)].kind == NodeKind::kComm) comms.push_back(i);
    ASSERT_EQ(comms.size(), 2u);
    const auto& tp = dag.nodes[static_cast<std::size_t>(comms[0])];
    const auto& dp = dag.nodes[static_cast<std::size_t>(comms[1])];
    EXPECT_EQ(tp.dims, (std::vector<int>{0}));
    EXPECT_EQ(tp.bytes, 1048576);
    EXPECT_EQ(dp.dims, (std::vector<int>{1}));
    EXPECT_EQ(dp.bytes, kWorldBytes);
    // Table 1's halving-doubling on one switch dimension of P NPUs, one chunk:
    // 2 (log2 P x latency + (P - 1) / P x m / bandwidth). The pair: 2 (300 + 1048576 / 2 / 20) =
    // 53028.8 ns; the grown group at 8 (P = 4): 2 (2 x 500 + 3/4 x 4194304 / 10) = 631145.6 ns; at
    // 16 (P = 8): 2 (3 x 500 + 7/8 x 4194304 / 10) = 737003.2 ns.
    const double tp_ns = 53028.8, dp_ns = world == 8 ? 631145.6 : 737003.2;
    const auto r = simulate(dag, net);
    auto took = [&](int i) {
      const auto& t = r.nodes[static_cast<std::size_t>(i)];
      return t.end_ns - t.start_ns;
    };
    EXPECT_NEAR(took(comms[0]), tp_ns, 1e-6 * tp_ns) << world;
    EXPECT_NEAR(took(comms[1]), dp_ns, 1e-6 * dp_ns) << world;
    // Both wait for the mm alone (no tensors recorded) and run on different dimensions at once.
    EXPECT_DOUBLE_EQ(r.compute_ns, kMmNs) << world;
    EXPECT_NEAR(r.total_ns, kMmNs + dp_ns, 1e-6 * r.total_ns) << world;
  }
  // Without growing, the data-parallel pair keeps its size: {0,2} is dimension 1 of 2 x 2 x 2
  // (NPU i at (i % 2, i / 2 % 2, i / 4)) and its all-reduce Table 1's for 2 NPUs.
  const auto cube = net::parse_network_yaml(
      "name: c\ndims:\n  - {kind: switch, size: 2, link_bandwidth_GBps: 20, links_per_npu: 1, latency_ns: 300}\n"
      "  - {kind: switch, size: 2, link_bandwidth_GBps: 10, links_per_npu: 1, latency_ns: 500}\n"
      "  - {kind: switch, size: 2, link_bandwidth_GBps: 10, links_per_npu: 1, latency_ns: 500}\n",
      "c");
  const Dag kept = import("hybrid4", cube, 8);
  std::vector<std::vector<int>> dims;
  for (const auto& n : kept.nodes)
    if (n.kind == NodeKind::kComm) dims.push_back(n.dims);
  EXPECT_EQ(dims, (std::vector<std::vector<int>>{{0}, {1}}));
}

TEST(CaptureWhatIf, GrowingAGroupThatDoesNotExistOrHalfACollectivesGroupsIsRefused) {
  auto msg = input_error_of([&] { import("hybrid4", two_by(4), 8, {"torch/9"}); });
  EXPECT_NE(msg.find("--grow-groups"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'torch/9'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("torch/3 [0,2]"), std::string::npos) << msg;  // the groups the capture has are listed
  // torch/3 grows but torch/4, the other group of the same collective, does not: ranks 1 and 3 would
  // be in groups of 2 while ranks 0 and 2 in groups of 4.
  msg = input_error_of([&] { import("hybrid4", two_by(4), 8, {"torch/3"}); });
  EXPECT_NE(msg.find("collective 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("group [1,3] cannot be scaled"), std::string::npos) << msg;
  EXPECT_NE(msg.find("torch/4, does not grow"), std::string::npos) << msg;
  // Growing the tensor-parallel pairs instead: {0,1,4,5} is no block of dimensions of 2 x 4.
  msg = input_error_of([&] { import("hybrid4", two_by(4), 8, {"torch/1", "torch/2"}); });
  EXPECT_NE(msg.find("group [0,1,4,5]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("collective 1"), std::string::npos) << msg;
}

TEST(CaptureWhatIf, OnAFabricAGrownGroupIsWholeDimensionsOfTheLogicalNetwork) {
  // hybrid4 on 16 servers, the data-parallel groups grown: sizes 2 (the pairs) and 16 / 4 x 2 = 8,
  // each dividing the next and 16: dimensions 2, 8 / 2, 16 / 8. The grown group {0,2,...,14} is
  // the NPUs (0, *, *): dimensions 1 and 2. On 24 (6 copies): 2, 12 / 2, 24 / 12. Without growing
  // both are pairs: 2, 16 / 2.
  const auto m = read_manifest(kData + "hybrid4");
  const auto grown = fabric_logical_network(m, 16, {"torch/3", "torch/4"});
  EXPECT_EQ(grown.shape(), "2x4x2");
  EXPECT_EQ(group_dims(scaled_group({0, 2}, 4, 16, 0, true), 16, grown, "t"), (std::vector<int>{1, 2}));
  EXPECT_EQ(group_dims(scaled_group({0, 1}, 4, 16, 3), 16, grown, "t"), (std::vector<int>{0}));
  EXPECT_EQ(fabric_logical_network(m, 24, {"torch/3", "torch/4"}).shape(), "2x6x2");
  EXPECT_EQ(fabric_logical_network(m, 16).shape(), "2x8");
}

TEST(CaptureWhatIf, OnAFabricTheGroupsAreDimensionsOfTheLogicalNetwork) {
  // pairs4 created groups of 2: on 16 servers, 2 x 8; dp4 none: 16; irregular4 one of 3 (1 is no
  // group), which does not divide the world of 4: one dimension.
  auto shape = [](const char* name) { return fabric_logical_network(read_manifest(kData + name), 16).shape(); };
  EXPECT_EQ(shape("pairs4"), "2x8");
  EXPECT_EQ(shape("dp4"), "16");
  EXPECT_EQ(shape("irregular4"), "16");
}

TEST(CaptureWhatIf, BadWorldsAndUnscalableGroupsAreRefusedNamingTheFieldTheGroupAndTheRank) {
  // Not a multiple of the capture's 4 ranks.
  const auto ring6 = net::parse_network_yaml(
      "name: r\ndims:\n  - {kind: ring, size: 6, link_bandwidth_GBps: 10, links_per_npu: 2, latency_ns: 500}\n", "r");
  auto msg = input_error_of([&] { import("dp4", ring6, 6); });
  EXPECT_NE(msg.find("--world"), std::string::npos) << msg;
  EXPECT_NE(msg.find("multiple of the capture's 4 ranks"), std::string::npos) << msg;
  // A world that is not the network's NPUs.
  msg = input_error_of([&] { import("dp4", one_switch(16), 8); });
  EXPECT_NE(msg.find("--world"), std::string::npos) << msg;
  EXPECT_NE(msg.find("network of 8 NPUs"), std::string::npos) << msg;
  // {0,1,2} and {3}: no partition into groups of one size; rank 3's group is named.
  msg = input_error_of([&] { import("irregular4", one_switch(8), 8); });
  EXPECT_NE(msg.find("group [3] cannot be scaled"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("collective 2"), std::string::npos) << msg;
}

TEST(CaptureWhatIf, TheTableSplitsTheIterationIntoComputeAndExposedCommunication) {
  eval::WhatIfConfig c;
  c.capture = kData + "dp4";
  for (const char* preset : {"3D-SW_SW_SW_homo", "4D-Ring_FC_Ring_SW"}) {
    eval::WhatIfNetwork n;
    n.label = preset;
    n.dims = net::load_network(preset);
    c.networks.push_back(n);
  }
  eval::WhatIfNetwork eight{"2x4",
                            net::parse_network_yaml("name: t\ndims:\n  - {kind: switch, size: 2, "
                                                    "link_bandwidth_GBps: 10, links_per_npu: 1, latency_ns: "
                                                    "500}\n  - {kind: switch, size: 4, link_bandwidth_GBps: 10, "
                                                    "links_per_npu: 1, latency_ns: 500}\n",
                                                    "t"),
                            std::nullopt};
  c.networks.push_back(eight);
  c.schedulers = {"baseline", "themis-scf", "ideal"};
  c.compute_scale = 4;
  const auto study = eval::run_capture_whatif(c);
  ASSERT_EQ(study.rows.size(), 9u);
  for (const auto& r : study.rows) {
    EXPECT_NEAR(r.compute_ns + r.exposed_comm_ns, r.iteration_ns, 1e-9 * r.iteration_ns) << r.network << r.scheduler;
    EXPECT_EQ(r.compute_ns, kMmNs / 4) << r.network;  // compute x4: the mm's 1 ms / 4
    EXPECT_GT(r.exposed_comm_ns, 0);                  // nothing hides the all-reduces
    EXPECT_EQ(r.world, r.npus);                       // the capture fills each network
  }
  EXPECT_EQ(study.rows[0].npus, 1024);
  EXPECT_EQ(study.rows[6].npus, 8);
}

}  // namespace
}  // namespace chorus::workload::capture
