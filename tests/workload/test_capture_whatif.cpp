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

namespace chorus::workload::capture {
namespace {

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

Dag import(const std::string& name, const net::Network& network, int world) {
  ImportOptions o;
  o.world = world;
  o.world_field = "--world";
  return import_capture(read_manifest(kData + name), network, o);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
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
    const auto msg = error_of([&] { scale_compute(roof, bad, "--compute-scale"); });
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
  auto msg = error_of([&] { import("dp4", ring6, 6); });
  EXPECT_NE(msg.find("--world"), std::string::npos) << msg;
  EXPECT_NE(msg.find("multiple of the capture's 4 ranks"), std::string::npos) << msg;
  // A world that is not the network's NPUs.
  msg = error_of([&] { import("dp4", one_switch(16), 8); });
  EXPECT_NE(msg.find("--world"), std::string::npos) << msg;
  EXPECT_NE(msg.find("network of 8 NPUs"), std::string::npos) << msg;
  // {0,1,2} and {3}: no partition into groups of one size; rank 3's group is named.
  msg = error_of([&] { import("irregular4", one_switch(8), 8); });
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
