// PyTorch execution graphs (workload/pytorch_eg): graphs recorded here with Debian's torch 1.13
// (tests/data/pytorch_eg/record_graphs.py: a DDP step, an all-to-all between two linear layers)
// imported with hand-derived FLOPs, sizes and timelines; malformed graphs name the file, node
// id and field.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "sim/dag_executor.h"
#include "tests/hand_timelines.h"
#include "workload/pytorch_eg.h"

namespace chorus {
namespace {

using workload::NodeKind;

std::string read_graph(const std::string& name) {
  std::ifstream in(std::string(CHORUS_TEST_DATA_DIR) + "/pytorch_eg/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const workload::Node* find(const workload::Dag& dag, const std::string& prefix) {
  for (const auto& n : dag.nodes)
    if (n.name.rfind(prefix, 0) == 0) return &n;
  return nullptr;
}

TEST(PytorchEg, DdpStepFlopsBucketAndDataFlow) {
  const auto pair = test_support::pair_network();
  const auto text = read_graph("ddp.0.json");
  ASSERT_TRUE(workload::looks_like_execution_graph(text));
  const auto dag = workload::import_execution_graph(text, "ddp.0.json", pair);
  // The 16-32-4 MLP: forward addmm [8,16]x[16,32] and [8,32]x[32,4]; backward mm [8,4]x[4,32],
  // [4,8]x[8,32] (the last layer's input and weight gradients), [32,8]x[8,16] (the first
  // layer's weight gradient): 2 x (4096 + 1024 + 1024 + 1024 + 4096) FLOPs.
  double flops = 0;
  int comms = 0;
  for (const auto& n : dag.nodes) {
    flops += n.flops;
    comms += n.kind == NodeKind::kComm;
  }
  EXPECT_DOUBLE_EQ(flops, 2.0 * (4096 + 1024 + 1024 + 1024 + 4096));
  ASSERT_EQ(comms, 1);
  // One bucket of every parameter: 16 x 32 + 32 + 32 x 4 + 4 = 676 floats.
  const auto* ar = find(dag, "gloo:all_reduce");
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(ar->op, coll::CollectiveOp::kAllReduce);
  EXPECT_DOUBLE_EQ(ar->bytes, 676.0 * 4);
  EXPECT_EQ(ar->dims, (std::vector<int>{0}));
  // DDP copies the reduced bucket back into the gradients (views of the bucket, then copies):
  // those operators wait for the all-reduce; the backward operators before it do not.
  const int ar_index = static_cast<int>(ar - dag.nodes.data());
  auto waits_for_all_reduce = [&](int node) {
    std::vector<int> stack = {node};
    std::vector<bool> seen(dag.nodes.size(), false);
    while (!stack.empty()) {
      const int k = stack.back();
      stack.pop_back();
      if (k == ar_index) return true;
      if (seen[static_cast<size_t>(k)]) continue;
      seen[static_cast<size_t>(k)] = true;
      for (int d : dag.nodes[static_cast<size_t>(k)].deps) stack.push_back(d);
    }
    return false;
  };
  int copies = 0;
  for (std::size_t k = 0; k < dag.nodes.size(); ++k) {
    const auto& n = dag.nodes[k];
    if (n.name.rfind("torch.distributed.ddp.reducer::copy_bucket_to_grad", 0) == 0) {
      ++copies;
      EXPECT_TRUE(waits_for_all_reduce(static_cast<int>(k))) << n.name;
    }
    if (n.name.find("Backward") != std::string::npos) {
      EXPECT_FALSE(waits_for_all_reduce(static_cast<int>(k))) << n.name;
    }
  }
  EXPECT_EQ(copies, 4);
  EXPECT_EQ(find(dag, "Optimizer.step")->compute, workload::ComputeKind::kOptimizer);
  EXPECT_GT(test_support::run(dag, pair).result.total_ns, 0);
}

TEST(PytorchEg, AllToAllTimelineByHand) {
  // linear [8,16]x[16,64] (16384 FLOPs), empty_like (the 2048-byte output buffer), the
  // all-to-all of the first linear's 8 x 64 floats (2048 bytes), linear [8,64]x[64,16] (16384).
  // At 16.384 FLOP/ns and 1024 bytes/ns each linear is compute-bound: 1000 ns (its 6912 / 6720
  // bytes take under 7 ns); empty_like moves 4096 bytes: 4 ns. On the pair (1 byte/ns) the
  // all-to-all sends half its bytes: 1024 ns. linear 0..1000; empty_like 1000..1004; the
  // all-to-all 1000..2024 (it waits for the tensor it sends); its result is not recorded, so the
  // thread's next operator, the second linear, waits for it: 2024..3024.
  const auto pair = test_support::pair_network();
  const auto dag = workload::import_execution_graph(read_graph("alltoall.0.json"), "alltoall.0.json", pair);
  ASSERT_EQ(dag.nodes.size(), 4u);
  EXPECT_EQ(dag.nodes[2].op, coll::CollectiveOp::kAllToAll);
  EXPECT_DOUBLE_EQ(dag.nodes[2].bytes, 2048);
  EXPECT_EQ(dag.nodes[2].deps, (std::vector<int>{0}));
  EXPECT_EQ(dag.nodes[3].deps, (std::vector<int>{1, 2}));
  sim::WorkloadSimOptions o;
  o.scheduler = sched::parse_scheduler("baseline");
  o.chunks_per_collective = 1;
  o.compute.peak_tflops = 0.016384;
  o.compute.memory_bandwidth_gbs = 1024;
  const auto r = sim::simulate_workload(dag, pair, o).result;
  EXPECT_DOUBLE_EQ(r.total_ns, 3024);
  EXPECT_DOUBLE_EQ(r.forward_compute_ns, 2004);
  EXPECT_DOUBLE_EQ(r.exposed_mp_comm_ns, 1020);
  // Two iterations: the second starts where the first ended.
  workload::ExecutionGraphOptions two;
  two.iterations = 2;
  const auto dag2 = workload::import_execution_graph(read_graph("alltoall.0.json"), "alltoall.0.json", pair, two);
  EXPECT_EQ(dag2.iterations, 2);
  EXPECT_DOUBLE_EQ(sim::simulate_workload(dag2, pair, o).result.total_ns, 2 * 3024);
}

TEST(PytorchEg, RanksAgreeOrTheFieldThatDiffersIsNamed) {
  const auto pair = test_support::pair_network();
  const auto ddp0 = workload::import_execution_graph(read_graph("ddp.0.json"), "ddp.0.json", pair);
  const auto ddp1 = workload::import_execution_graph(read_graph("ddp.1.json"), "ddp.1.json", pair);
  EXPECT_NO_THROW(workload::check_same_communication(ddp0, "ddp.0.json (rank 0)", ddp1, "ddp.1.json (rank 1)"));
  auto expect_error = [&](const workload::Dag& other, const std::vector<std::string>& needles) {
    try {
      workload::check_same_communication(ddp0, "r0", other, "r1");
      ADD_FAILURE() << "no error; expected " << needles.front();
    } catch (const InputError& e) {
      for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
    }
  };
  expect_error(workload::import_execution_graph(read_graph("alltoall.1.json"), "alltoall.1.json", pair),
               {"r1: collective 1 ('gloo:all_to_all #26'): field op: alltoall, but r0 has allreduce"});
  auto other = ddp1;
  for (auto& n : other.nodes)
    if (n.kind == NodeKind::kComm) n.bytes += 4;
  expect_error(other, {"r1: collective 1", "field bytes: 2708, but r0 has 2704"});
  other = ddp1;
  other.iterations = 2;
  expect_error(other, {"r1: field iterations: 2, but r0 has 1"});
  other = ddp1;
  std::erase_if(other.nodes, [](const workload::Node& n) { return n.kind == NodeKind::kComm; });
  expect_error(other, {"r1: 0 collectives, but r0 has 1"});
}

TEST(PytorchEg, MalformedGraphsNameFileNodeAndField) {
  const auto pair = test_support::pair_network();
  auto expect_error = [&](const std::string& text, const std::vector<std::string>& needles) {
    try {
      workload::import_execution_graph(text, "g.json", pair);
      ADD_FAILURE() << "no error for " << text.substr(0, 80);
    } catch (const InputError& e) {
      for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
    }
  };
  const auto good = read_graph("alltoall.0.json");
  expect_error(good.substr(0, good.size() / 2), {"g.json", "not JSON", "truncated"});
  expect_error("{\"schema\": \"1.0.1\"}", {"g.json", "field nodes"});
  const std::string thread =
      R"j({"name": "[pytorch|profiler|execution_graph|thread]", "id": 2, "parent": 1, "tid": 1, "inputs": [],
          "input_shapes": [], "input_types": [], "outputs": [], "output_shapes": [], "output_types": []})j";
  auto graph = [&](const std::string& node) { return R"j({"schema": "1.0.1", "nodes": [)j" + thread + ", " + node + "]}"; };
  expect_error(graph(R"j({"name": "aten::mm", "id": 5, "parent": 2, "tid": 1})j"), {"node id 5", "field inputs", "missing"});
  expect_error(graph(R"j({"name": "aten::mm", "id": 5, "parent": 2, "tid": "one"})j"), {"node id 5", "field tid"});
  expect_error(graph(R"j({"name": "aten::mm", "id": 5, "parent": 2, "tid": 1, "inputs": [[1, 2, 0, -4, 4, "cpu"]],
                         "input_shapes": [[2, 2]], "input_types": ["Tensor(float)"], "outputs": [],
                         "output_shapes": [], "output_types": []})j"),
               {"node id 5", "field inputs[0]", "-4"});
  expect_error(graph(R"j({"name": "aten::mm", "id": 5, "parent": 2, "tid": 1,
                         "inputs": [[1, 2, 0, 4, 4, "cpu"], [3, 4, 0, 6, 4, "cpu"]],
                         "input_shapes": [[2, 2], [3, 2]], "input_types": ["Tensor(float)", "Tensor(float)"],
                         "outputs": [], "output_shapes": [], "output_types": []})j"),
               {"node id 5", "field input_shapes", "aten::mm needs"});
  expect_error(graph(R"j({"name": "gloo:broadcast", "id": 5, "parent": 2, "tid": 1, "inputs": [],
                         "input_shapes": [], "input_types": [], "outputs": [], "output_shapes": [], "output_types": []})j"),
               {"node id 5", "field name", "'gloo:broadcast' is not simulated"});
  expect_error(R"j({"schema": "1.0.1", "nodes": []})j", {"g.json", "no operator"});
}

}  // namespace
}  // namespace chorus
