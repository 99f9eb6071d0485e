// ASTRA-sim's own example workloads (tests/data/workloads/astra-sim-1.0, MIT, see its README):
// every file imports and simulates, and each file shape's mapping is checked by hand: MICRO,
// HYBRID_DATA_MODEL / HYBRID_MODEL_DATA / HYBRID_CUSTOMIZED without a model-parallel group
// (ASTRA-sim 1.0's own choice of dimensions), and the transformer hybrids with one.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "core/error.h"
#include "net/presets.h"
#include "sim/run_collective.h"
#include "tests/common/hand_timelines.h"
#include "workload/astra_text.h"

namespace chorus {
namespace {

using chorus::CollectiveKind;
using workload::CommGroup;
using workload::NodeKind;

const char* const kExamples[] = {"DLRM_HybridParallel",
                                 "MLP_HybridParallel_Data_Model",
                                 "MLP_HybridParallel_Model_Data",
                                 "MLP_ModelParallel",
                                 "Resnet50_DataParallel",
                                 "Transformer_HybridParallel",
                                 "Transformer_HybridParallel_Fwd_In_Bckwd",
                                 "microAllReduce",
                                 "microAllToAll",
                                 "sample_per_layer_parallel_HybridCustomized"};

std::string example_path(const std::string& name) {
  return std::string(CHORUS_TEST_DATA_DIR) + "/workloads/astra-sim-1.0/" + name + ".txt";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

workload::Dag import(const std::string& text, const net::Network& net, int iterations = 1) {
  workload::AstraTextOptions o;
  o.iterations = iterations;
  return workload::parse_astra_text(text, "w.txt", net, o);
}

workload::Dag import_example(const std::string& name, const net::Network& net, int iterations = 1) {
  workload::AstraTextOptions o;
  o.iterations = iterations;
  return workload::parse_astra_text(read_file(example_path(name)), name, net, o);
}

// The dimensions of every communication node, keyed by the node's name up to " it".
std::map<std::string, std::vector<int>> comm_dims(const workload::Dag& dag) {
  std::map<std::string, std::vector<int>> out;
  for (const auto& n : dag.nodes)
    if (n.kind == NodeKind::kComm) out[n.name.substr(0, n.name.find(" it"))] = n.dims;
  return out;
}

// Two fully connected pairs: dimension 0 at 2 bytes/ns (16 Gb/s), dimension 1 at 1 byte/ns,
// no latency. An all-reduce of S bytes on a pair moves S/2 twice: S/2 ns on dim 0, S ns on dim 1.
net::Network two_pairs() {
  net::Network n;
  n.name = "two-pairs";
  n.dims.push_back(net::Dimension{net::DimKind::kFullyConnected, 2, 16.0, 1, 0});
  n.dims.push_back(net::Dimension{net::DimKind::kFullyConnected, 2, 8.0, 1, 0});
  return n;
}

TEST(AstraExamples, EveryShippedFileImportsAndSimulates) {
  // 3D-SW_SW_SW_homo (16 x 8 x 8) and 4D-Ring_SW_SW_SW (4 x 4 x 8 x 8), whose first dimension is
  // the transformer files' model-parallel group of 4.
  for (const char* preset : {"3D-SW_SW_SW_homo", "4D-Ring_SW_SW_SW"}) {
    const auto net = *net::find_preset(preset);
    for (const char* name : kExamples) {
      SCOPED_TRACE(std::string(name) + " on " + preset);
      const auto text = read_file(example_path(name));
      ASSERT_TRUE(workload::looks_like_astra_text(text));
      const auto dag = import_example(name, net, 2);
      int comms = 0;
      for (const auto& n : dag.nodes) comms += n.kind == NodeKind::kComm;
      EXPECT_GT(comms, 0);
      const auto r = test_support::run(dag, net, "themis-scf", 4).result;
      EXPECT_GT(r.total_ns, 0);
      EXPECT_GT(r.bytes_per_npu, 0);
    }
  }
}

TEST(AstraExamples, MicroAllReduceByHandAndAsOneCollective) {
  // microAllReduce.txt: MICRO, one layer whose weight gradient all-reduces 1 MiB. ASTRA-sim runs
  // no compute, only that collective over every dimension. On a pair at 1 byte/ns an all-reduce
  // of S bytes takes S/2 + S/2 = S ns.
  const double S = 1048576;
  const auto pair = test_support::pair_network();
  const auto dag = import_example("microAllReduce", pair);
  ASSERT_EQ(dag.nodes.size(), 1u);
  EXPECT_EQ(dag.nodes[0].kind, NodeKind::kComm);
  EXPECT_EQ(dag.nodes[0].op, CollectiveKind::kAllReduce);
  EXPECT_DOUBLE_EQ(dag.nodes[0].bytes, S);
  EXPECT_DOUBLE_EQ(test_support::run(dag, pair).result.total_ns, S);
  // microAllToAll.txt: an all-to-all of m bytes on a pair sends m/2: m/2 ns.
  EXPECT_DOUBLE_EQ(test_support::run(import_example("microAllToAll", pair), pair).result.total_ns, S / 2);

  // On 3D-SW_SW_SW_homo, baseline, one chunk, by Table 1 (docs/themis-model.md): every dimension
  // has 100 bytes/ns per NPU (4 x 200, 4 x 200, 1 x 800 Gb/s) and halving-doubling takes log2 P
  // steps of 700, 700, 1700 ns. RS dim 0 sends 15/16 S (2800 + 9830.4 ns), dim 1 7/8 of S/16
  // (2100 + 573.44), dim 2 7/8 of S/128 (5100 + 71.68); the all-gathers mirror them: 40951.04 ns.
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");
  EXPECT_NEAR(test_support::run(import_example("microAllReduce", net), net, "baseline", 1).result.total_ns,
              2 * (2800 + 9830.4 + 2100 + 573.44 + 5100 + 71.68), 1e-6);
  // With Themis and 64 chunks it is `chorus sim collective`'s request: the same op, size and chunks.
  const auto one = sim::run_collective(net, sim::make_request(CollectiveKind::kAllReduce, S, 64, "themis-scf"));
  const auto r = test_support::run(import_example("microAllReduce", net), net, "themis-scf", 64).result;
  EXPECT_DOUBLE_EQ(r.total_ns, one.result.time_ns);

  // Every pass issues its collective at once (1.0's iterate_micro_benchmark; Chakra's text
  // converter writes them without dependencies): three passes are three independent nodes.
  const auto three = import_example("microAllReduce", pair, 3);
  ASSERT_EQ(three.nodes.size(), 3u);
  for (const auto& n : three.nodes) EXPECT_TRUE(n.deps.empty());
  // Sharing the pair's one link they finish together after 3 S of transfers.
  EXPECT_DOUBLE_EQ(test_support::run(three, pair).result.total_ns, 3 * S);
}

// One layer: forward 1000 cycles then an all-reduce of 2000 bytes, input gradient 500 cycles,
// weight gradient 1000 cycles then an all-reduce of 4000 bytes, no update time.
const char* const kOneLayer = "\n1\nl0 -1 1000 ALLREDUCE 2000 500 NONE 0 1000 ALLREDUCE 4000 0\n";

TEST(AstraExamples, HybridDataModelUsesTheFirstDimensionForTheModel) {
  // ASTRA-sim 1.0, HYBRID_DATA_MODEL: forward and input-gradient traffic on dimension 0, weight
  // gradients on the others. On two_pairs: F 0..1000; its all-reduce on dim 0 (2000 B at 2 B/ns:
  // 1000 ns) 1000..2000; WG 2000..3000, its all-reduce on dim 1 (4000 B at 1 B/ns) 3000..7000
  // while IG runs 3000..3500. Total 7000; exposed model-parallel 1000, data-parallel 3500.
  const auto net = two_pairs();
  const auto dag = import(std::string("HYBRID_DATA_MODEL") + kOneLayer, net);
  const auto dims = comm_dims(dag);
  EXPECT_EQ(dims.at("fwd-comm l0"), (std::vector<int>{0}));
  EXPECT_EQ(dims.at("wg-comm l0"), (std::vector<int>{1}));
  const auto r = test_support::run(dag, net).result;
  EXPECT_DOUBLE_EQ(r.total_ns, 7000);
  EXPECT_DOUBLE_EQ(r.exposed_mp_comm_ns, 1000);
  EXPECT_DOUBLE_EQ(r.exposed_dp_comm_ns, 3500);
}

TEST(AstraExamples, HybridModelDataUsesTheFirstDimensionForTheData) {
  // HYBRID_MODEL_DATA: the reverse. F 0..1000; its all-reduce on dim 1 (2000 ns) 1000..3000;
  // WG 3000..4000, its all-reduce on dim 0 (4000 B at 2 B/ns) 4000..6000 while IG runs
  // 4000..4500. Total 6000; exposed model-parallel 2000, data-parallel 1500.
  const auto net = two_pairs();
  const auto dag = import(std::string("HYBRID_MODEL_DATA") + kOneLayer, net);
  const auto dims = comm_dims(dag);
  EXPECT_EQ(dims.at("fwd-comm l0"), (std::vector<int>{1}));
  EXPECT_EQ(dims.at("wg-comm l0"), (std::vector<int>{0}));
  const auto r = test_support::run(dag, net).result;
  EXPECT_DOUBLE_EQ(r.total_ns, 6000);
  EXPECT_DOUBLE_EQ(r.exposed_mp_comm_ns, 2000);
  EXPECT_DOUBLE_EQ(r.exposed_dp_comm_ns, 1500);
}

TEST(AstraExamples, ShippedHybridFilesGetOneZeroDimensionsPerPhase) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");  // 16 x 8 x 8
  // MLP_HybridParallel_Data_Model: 6 layers, each with a forward all-gather, an input-gradient
  // and a weight-gradient all-reduce; the first layer's input gradient has no collective.
  for (const auto& [name, model, data] :
       {std::tuple{"MLP_HybridParallel_Data_Model", std::vector<int>{0}, std::vector<int>{1, 2}},
        std::tuple{"MLP_HybridParallel_Model_Data", std::vector<int>{1, 2}, std::vector<int>{0}}}) {
    SCOPED_TRACE(name);
    const auto dag = import_example(name, net);
    int fwd = 0, ig = 0, wg = 0;
    for (const auto& n : dag.nodes) {
      if (n.kind != NodeKind::kComm) continue;
      const bool is_wg = n.name.rfind("wg-comm", 0) == 0;
      EXPECT_EQ(n.dims, is_wg ? data : model) << n.name;
      EXPECT_EQ(n.group, is_wg ? CommGroup::kDataParallel : CommGroup::kModelParallel) << n.name;
      fwd += n.name.rfind("fwd-comm", 0) == 0;
      ig += n.name.rfind("ig-comm", 0) == 0;
      wg += is_wg;
      if (n.op == CollectiveKind::kAllGather && n.name.rfind("fwd-comm layer_64_2_mlp0", 0) == 0) {
        double group = 1;  // ASTRA-sim's all-gather size is each NPU's piece
        for (int d : model) group *= net.dims[static_cast<size_t>(d)].size;
        EXPECT_DOUBLE_EQ(n.bytes, 37632 * group);
      }
    }
    EXPECT_EQ(fwd, 6);
    EXPECT_EQ(ig, 5);
    EXPECT_EQ(wg, 6);
  }
  // sample_per_layer_parallel_HybridCustomized: each layer's 13th field is its policy.
  const auto dims = comm_dims(import_example("sample_per_layer_parallel_HybridCustomized", net));
  const std::vector<int> all{0, 1, 2};
  EXPECT_EQ(dims.at("fwd-comm layer_64_2_mlp0"), (std::vector<int>{0}));  // HYBRID_DATA_MODEL
  EXPECT_EQ(dims.at("wg-comm layer_64_2_mlp0"), (std::vector<int>{1, 2}));
  EXPECT_EQ(dims.at("fwd-comm layer_64_2_mlp1"), (std::vector<int>{1, 2}));  // HYBRID_MODEL_DATA
  EXPECT_EQ(dims.at("ig-comm layer_64_2_mlp1"), (std::vector<int>{1, 2}));
  EXPECT_EQ(dims.at("wg-comm layer_64_2_mlp1"), (std::vector<int>{0}));
  EXPECT_EQ(dims.at("wg-comm layer_64_2_mlp2"), all);   // DATA
  EXPECT_EQ(dims.at("fwd-comm layer_64_2_mlp3"), all);  // MODEL
  EXPECT_EQ(dims.at("ig-comm layer_64_2_mlp3"), all);
  EXPECT_EQ(dims.count("wg-comm layer_64_2_mlp3"), 0u);  // NONE
  // The transformer files name their group: 4 NPUs = the 4D presets' first dimension.
  const auto net4 = *net::find_preset("4D-Ring_SW_SW_SW");
  const auto t = comm_dims(import_example("Transformer_HybridParallel", net4));
  EXPECT_EQ(t.at("fwd-comm Embedding"), (std::vector<int>{0}));
  EXPECT_EQ(t.at("wg-comm Q1"), (std::vector<int>{1, 2, 3}));
}

TEST(AstraExamples, CustomizedAndMicroErrorsNameLineAndField) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");
  auto expect_error = [&](const std::string& text, const std::string& needle) {
    try {
      import(text, net);
      ADD_FAILURE() << "no error for: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const std::string layer = "l0 -1 1 ALLGATHER 8 1 NONE 0 1 ALLREDUCE 8 0";
  expect_error("HYBRID_CUSTOMIZED\n1\n" + layer + "\n", "w.txt:3: layer 'l0' has 12 fields; expected 13");
  expect_error("HYBRID_CUSTOMIZED\n1\n" + layer + " HYBRID_FOO\n", "w.txt:3: layer 'l0': field 13 (policy)");
  expect_error("HYBRID_CUSTOMIZED\n1\n" + layer + " HYBRID_TRANSFORMER\n", "model_parallel_NPU_group");
  expect_error("HYBRID_FOO\n1\n" + layer + "\n", "needs 'model_parallel_NPU_group: N'");
  expect_error("MICRO\n1\nl0 -1 5 NONE 0 5 NONE 0 5 NONE 0 5\n", "MICRO");
  expect_error("MICRO\n1\nl0 -1 5 NONE 0 5 NONE 0 5 ALLREDUCE\n", "w.txt:3");
}

TEST(AstraExamples, TruncatedFilesNameTheFileAndLine) {
  // Every shipped file cut at a third and at half of its bytes: the cut line has too few fields,
  // or the file ends before the announced layers. Either way an InputError naming file:line.
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");
  for (const char* name : kExamples) {
    const auto text = read_file(example_path(name));
    for (std::size_t cut : {text.size() / 3, text.size() / 2}) {
      SCOPED_TRACE(std::string(name) + " cut at byte " + std::to_string(cut));
      try {
        workload::AstraTextOptions o;
        workload::parse_astra_text(text.substr(0, cut), name, net, o);
        ADD_FAILURE() << "no error";
      } catch (const InputError& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind(std::string(name) + ":", 0), 0u) << what;
        EXPECT_TRUE(what.find("fields; expected") != std::string::npos || what.find("end of file") != std::string::npos)
            << what;
      }
    }
  }
}

}  // namespace
}  // namespace chorus
