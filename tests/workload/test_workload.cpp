// The workload module: model zoo sizes against published figures, the parallelism
// generators' structure, and whole-model orderings of the schedulers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/error.h"
#include "net/presets.h"
#include "sim/dag_executor.h"
#include "workload/compute_model.h"
#include "workload/parallelism.h"
#include "workload/astra_text.h"
#include "workload/workload_yaml.h"
#include "workload/zoo.h"
#include "tests/common/hand_timelines.h"

namespace chorus {
namespace {

using test_support::pair_network;
using test_support::run;
using workload::NodeKind;

TEST(Zoo, ResNet152MatchesPublishedSizes) {
  const auto m = workload::resnet152(1);
  // torchvision's resnet152 has 60,192,808 parameters (conv weights, BN scale/shift, fc).
  EXPECT_DOUBLE_EQ(m.total_params(), 60192808.0);
  // 11.5 G multiply-accumulates per 224x224 image (He et al. 2015, Table 1: 11.3 x 10^9
  // FLOPs, counting multiply-adds; torchvision lists 11.51 G).
  EXPECT_NEAR(m.total_forward_flops() / 2, 11.5e9, 0.1e9);
  // Conv1 + 50 bottlenecks x 3 + 4 projections + fc.
  EXPECT_EQ(m.layers.size(), 156u);
  // Batch scales the work, not the parameters.
  EXPECT_DOUBLE_EQ(workload::resnet152(32).total_forward_flops(), 32 * m.total_forward_flops());
}

TEST(Zoo, Transformer1TMatchesMegatronTable) {
  const auto m = workload::transformer_1t(1);
  // Narayanan et al. (SC '21) Table 1: 1008 G parameters with embeddings; we leave out the
  // 51200 x 25600 = 1.3 G embedding parameters.
  EXPECT_NEAR(m.total_params() + 51200.0 * 25600, 1008e9, 2e9);
  // 24 B s h^2 (1 + s / 6h) forward FLOPs per layer (their Eq. 2 without the logit layer).
  const double h = 25600, s = 2048;
  EXPECT_NEAR(m.total_forward_flops(), 128 * 24 * s * h * h * (1 + s / (6 * h)), 1e6);
}

TEST(Zoo, GnmtLayerSizesByHand) {
  const auto m = workload::gnmt(128);
  // LSTM(in, h) = 4h(in + h) + 4h. Bi-directional LSTM(1024,1024) x 2 = 16,785,408;
  // LSTM(2048,1024) = 12,587,008 (encoder layer 2 and all 8 decoder layers);
  // 6 x LSTM(1024,1024) = 50,356,224; 2 embeddings 32000 x 1024 = 65,536,000;
  // attention 2 x 1024^2 + 1024 = 2,098,176; softmax 1024 x 32000 + 32000 = 32,800,000.
  EXPECT_DOUBLE_EQ(m.total_params(), 280858880.0);
  EXPECT_EQ(m.layers.size(), 20u);
  // The softmax over 128 x 50 tokens: 2 x 6400 x 1024 x 32000 FLOPs.
  EXPECT_DOUBLE_EQ(m.layers.back().forward_flops, 2.0 * 6400 * 1024 * 32000);
}

TEST(Zoo, DlrmMlpSizesByHand) {
  const auto m = workload::dlrm(512);
  // Bottom 13-512-256-128: 171,392 parameters; top 479-1024-1024-512-256-1: 2,197,505.
  EXPECT_DOUBLE_EQ(m.total_params(), 171392.0 + 2197505.0);
  EXPECT_EQ(m.embeddings.tables, 26);
  EXPECT_EQ(m.layers[static_cast<size_t>(m.embeddings.top_start)].name, "top_mlp0");
}

// TopoOpt (NSDI '23) Table 2, top row. Every number below is worked out from the table and
// the readings in zoo.cpp, not taken from the program.
TEST(Zoo, TopoOptCandleSizesByHand) {
  const auto m = workload::candle_uno(256);
  // Fully connected (in -> out) = in x out weights + out biases.
  // feature0 15580 -> 16384: 15580 x 16384 + 16384 = 255,262,720 + 16,384 = 255,279,104.
  // 15 more feature layers + 8 dense layers, 23 x (16384 x 16384 + 16384)
  //   = 23 x (268,435,456 + 16,384) = 23 x 268,451,840 = 6,174,392,320.
  // output 16384 -> 1: 16384 + 1 = 16,385.
  // Total 255,279,104 + 6,174,392,320 + 16,385 = 6,429,687,809.
  EXPECT_DOUBLE_EQ(m.total_params(), 6429687809.0);
  EXPECT_EQ(m.layers.size(), 25u);
  EXPECT_DOUBLE_EQ(m.bytes_per_element, 4);
  EXPECT_EQ(m.embeddings.tables, 0);
  // A 16384 x 16384 layer: 16384^2 = 268,435,456 multiply-adds per sample, 2 FLOPs each, 256
  // samples: 2 x 268,435,456 x 256 = 137,438,953,472 FLOPs.
  EXPECT_DOUBLE_EQ(m.layers[1].forward_flops, 137438953472.0);
  // The first layer: 2 x 15580 x 16384 x 256 = 130,694,512,640.
  EXPECT_DOUBLE_EQ(m.layers[0].forward_flops, 130694512640.0);
  EXPECT_DOUBLE_EQ(m.layers[0].input_elements, 256.0 * 15580);
  const auto entry = workload::zoo_model("topoopt-candle");
  EXPECT_EQ(entry.model.batch_per_npu, 256);
  EXPECT_EQ(entry.parallelism.mp_npus, 1);
  EXPECT_EQ(entry.parallelism.ep_npus, 1);
  EXPECT_FALSE(entry.parallelism.zero2);
}

TEST(Zoo, TopoOptBertSizesByHand) {
  const auto m = workload::bert_topoopt(16);
  // h = 1024. Embeddings: (30522 words + 512 positions + 2 segments) x 1024 + layer norm 2 x
  // 1024 = 31,254,528 + 524,288 + 2,048 + 2,048 = 31,782,912.
  // Attention: Q, K, V, output 4 x (1024^2 + 1024) + layer norm 2048
  //   = 4,194,304 + 4,096 + 2,048 = 4,200,448.
  // FFN: 1024 x 4096 + 4096 + 4096 x 1024 + 1024 + layer norm 2048
  //   = 8,388,608 + 4,096 + 1,024 + 2,048 = 8,395,776.
  // 12 x (4,200,448 + 8,395,776) = 12 x 12,596,224 = 151,154,688; total 182,937,600.
  EXPECT_DOUBLE_EQ(m.total_params(), 182937600.0);
  EXPECT_EQ(m.layers.size(), 25u);  // embeddings + 12 x (attention, FFN)
  EXPECT_DOUBLE_EQ(m.bytes_per_element, 4);
  // Attention forward on 16 x 64 = 1024 tokens: 2 x 4,200,448 x 1024 = 8,602,517,504, plus
  // scores and context 2 x 2 x 64^2 x 1024 x 16 sequences = 268,435,456: 8,870,952,960.
  EXPECT_EQ(m.layers[1].name, "layer0.attn");
  EXPECT_DOUBLE_EQ(m.layers[1].forward_flops, 8870952960.0);
  // FFN: 2 x 8,395,776 x 1024 = 17,194,549,248.
  EXPECT_DOUBLE_EQ(m.layers[2].forward_flops, 17194549248.0);
  EXPECT_DOUBLE_EQ(m.layers[0].forward_flops, 0);  // lookups
  for (const auto& l : m.layers) EXPECT_TRUE(l.mp_all_reduce) << l.name;
  const auto entry = workload::zoo_model("topoopt-bert");
  EXPECT_EQ(entry.model.batch_per_npu, 16);
  EXPECT_EQ(entry.parallelism.mp_npus, 4);
}

TEST(Zoo, TopoOptDlrmSizesByHand) {
  const auto m = workload::dlrm_topoopt(128);
  // Bottom: 13 -> 4096: 13 x 4096 + 4096 = 57,344; 15 x (4096^2 + 4096) = 15 x 16,781,312
  //   = 251,719,680; bottom 251,777,024.
  // Top: (4096 + 64 x 128 = 12288) -> 2048: 12288 x 2048 + 2048 = 25,167,872;
  //   7 x (2048^2 + 2048) = 7 x 4,196,352 = 29,374,464; 2048 -> 1: 2,049; top 54,544,385.
  // Total 306,321,409.
  EXPECT_DOUBLE_EQ(m.total_params(), 306321409.0);
  EXPECT_EQ(m.layers.size(), 25u);
  EXPECT_EQ(m.embeddings.tables, 64);
  EXPECT_EQ(m.embeddings.dim, 128);
  EXPECT_EQ(m.layers[static_cast<size_t>(m.embeddings.top_start)].name, "top_mlp0");
  EXPECT_DOUBLE_EQ(m.layers[static_cast<size_t>(m.embeddings.top_start)].input_elements, 128.0 * 12288);
  // top_mlp0: 2 x 12288 x 2048 x 128 samples = 6,442,450,944 FLOPs.
  EXPECT_DOUBLE_EQ(m.layers[static_cast<size_t>(m.embeddings.top_start)].forward_flops, 6442450944.0);
  EXPECT_EQ(workload::zoo_model("topoopt-dlrm").model.batch_per_npu, 128);
}

TEST(WorkloadYaml, TwoLayersByHand) {
  const auto entry = workload::load_workload(std::string(CHORUS_TEST_DATA_DIR) + "/workloads/two_layers.yaml");
  EXPECT_EQ(entry.model.name, "two-layers");
  ASSERT_EQ(entry.model.layers.size(), 2u);
  const net::Network pair = pair_network();
  auto p = entry.parallelism;
  p.iterations = 1;
  const auto dag = workload::build_training_dag(entry.model, p, pair);
  const auto r = run(dag, pair).result;
  // F0 0..1000, F1 1000..3000, IG1 3000..5000, WG1 5000..7000, WG0 7000..8000 (no IG for the
  // first layer). AR1 (2000 B: RS and AG of 1000 B each) RS 7000..8000; AR0 (1000 B) issued at
  // 8000 by WG0's end, which the clock handles before AR1's RS end at the same time, so AR0's
  // RS arrives first: AR0 RS 8000..8500, AR1 AG 8500..9500, AR0 AG 9500..10000.
  EXPECT_DOUBLE_EQ(r.compute_ns, 8000);
  EXPECT_DOUBLE_EQ(r.forward_compute_ns, 3000);
  EXPECT_DOUBLE_EQ(r.backward_compute_ns, 5000);
  EXPECT_DOUBLE_EQ(r.total_ns, 10000);
  EXPECT_DOUBLE_EQ(r.exposed_dp_comm_ns, 2000);
}

TEST(WorkloadYaml, ErrorsNameFileLineAndField) {
  auto expect_error = [](const std::string& text, const std::string& needle) {
    try {
      workload::parse_workload_yaml(text, "w.yaml");
      ADD_FAILURE() << "no error for: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("batch_per_npu: 1\nlayers:\n  - {forward_flop: 1}\n", "w.yaml:3");
  expect_error("batch_per_npu: 1\nlayers:\n  - {forward_flop: 1}\n", "forward_flops");  // did you mean
  expect_error("batch_per_npu: 1\nlayers:\n  - {forward_flops: -1}\n", "layers[0].forward_flops");
  expect_error("batch_per_npu: 0\nlayers:\n  - {forward_flops: 1}\n", "batch_per_npu");
  expect_error("batch_per_npu: 1\nlayers: []\n", "layers");
  expect_error("batch_per_npu: 1\nparalelism: {}\nlayers:\n  - {forward_flops: 1}\n", "w.yaml:2");
  expect_error("batch_per_npu: 1\nlayers:\n  - {forward_flops: 1}\nembeddings: {tables: 2, dim: 4, top_start: 1}\n",
               "embeddings.top_start");
  expect_error("batch_per_npu: [1\n", "YAML syntax error");
  expect_error("batch_per_npu: 1\nlayers:\n  - {forward_flops: lots}\n", "a number");
  EXPECT_THROW(workload::load_workload("/nonexistent/w.yaml"), InputError);
}

std::string read_data(const std::string& name) {
  std::ifstream in(std::string(CHORUS_TEST_DATA_DIR) + "/workloads/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One iteration of the ASTRA-sim text workload tests/data/workloads/`name` on `net`.
workload::Dag astra_one_iteration(const std::string& name, const net::Network& net) {
  workload::AstraTextOptions opt;
  opt.iterations = 1;
  return workload::parse_astra_text(read_data(name), name, net, opt);
}

TEST(AstraText, DataParallelByHand) {
  const net::Network pair = pair_network();
  ASSERT_TRUE(workload::looks_like_astra_text(read_data("astra_data.txt")));
  const auto dag = astra_one_iteration("astra_data.txt", pair);
  const auto r = run(dag, pair).result;
  // F0 0..1000, F1 1000..3000; WG1 3000..5000, AR1 (2000 B) 5000..7000 while IG1 5000..7000;
  // WG0 7000..8000, AR0 (1000 B) 8000..9000 while IG0 8000..8500; the last update waits for
  // AR0: 9000.
  EXPECT_DOUBLE_EQ(r.total_ns, 9000);
  EXPECT_DOUBLE_EQ(r.forward_compute_ns, 3000);
  EXPECT_DOUBLE_EQ(r.backward_compute_ns, 5500);
  EXPECT_DOUBLE_EQ(r.exposed_dp_comm_ns, 500);
}

TEST(AstraText, HybridDlrmByHand) {
  // ASTRA-sim 1.0's HYBRID_DLRM loop ("HYBRID_DLRM 1": layer 1 is the last bottom MLP) on two NPUs
  // at 1 byte/ns: an all-to-all of m bytes moves m/2 per NPU (m/2 ns), an all-reduce of B bytes
  // B/2 + B/2 (B ns). Forward: emb 0..1000, its all-to-all (4000 B) 1000..3000 while bot runs
  // 1000..2000; top waits for the all-to-all: 3000..5000. Back-propagation: wg top 5000..7000,
  // its all-reduce (1000 B) 7000..8000 under ig top 7000..9000; the embedding's backward
  // all-to-all after ig top: 9000..11000; wg bot 11000..12000, its all-reduce (2000 B)
  // 12000..14000 under ig bot 12000..13000 and wg emb 13000..14000; the embedding has no input
  // gradient. Total 14000; forward compute 4000, backward 7000; exposed model-parallel (the two
  // all-to-alls) 1000 + 2000, data-parallel 0.
  const net::Network pair = pair_network();
  const auto dag = astra_one_iteration("astra_dlrm.txt", pair);
  int a2a = 0, ar = 0, ig = 0;
  for (const auto& n : dag.nodes) {
    a2a += n.kind == NodeKind::kComm && n.op == CollectiveKind::kAllToAll;
    ar += n.kind == NodeKind::kComm && n.op == CollectiveKind::kAllReduce;
    ig += n.kind == NodeKind::kCompute && n.compute == workload::ComputeKind::kInputGradient;
  }
  EXPECT_EQ(a2a, 2);
  EXPECT_EQ(ar, 2);
  EXPECT_EQ(ig, 2);  // top and bot
  const auto r = run(dag, pair).result;
  EXPECT_DOUBLE_EQ(r.total_ns, 14000);
  EXPECT_DOUBLE_EQ(r.forward_compute_ns, 4000);
  EXPECT_DOUBLE_EQ(r.backward_compute_ns, 7000);
  EXPECT_DOUBLE_EQ(r.exposed_mp_comm_ns, 3000);
  EXPECT_DOUBLE_EQ(r.exposed_dp_comm_ns, 0);
}

TEST(AstraText, HybridGroupsAndSizes) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");  // 16 x 8 x 8
  const auto dag = astra_one_iteration("astra_hybrid.txt", net);
  int ag = 0, rs = 0, mp_ar = 0;
  for (const auto& n : dag.nodes) {
    if (n.kind != NodeKind::kComm) continue;
    if (n.op == CollectiveKind::kAllGather) {
      ++ag;  // forward and recomputed forward of mlp; 1024-byte pieces x 128 NPUs gathered
      EXPECT_DOUBLE_EQ(n.bytes, 1024.0 * 128);
      EXPECT_EQ(n.dims, (std::vector<int>{0, 1}));
    } else if (n.op == CollectiveKind::kReduceScatter) {
      ++rs;
      EXPECT_EQ(n.dims, (std::vector<int>{2}));
      EXPECT_EQ(n.group, workload::CommGroup::kDataParallel);
    } else if (n.group == workload::CommGroup::kModelParallel) {
      ++mp_ar;  // attn: forward, recompute (it is the first layer: its input gradient has no collective)
      EXPECT_EQ(n.dims, (std::vector<int>{0, 1}));
    }
  }
  EXPECT_EQ(ag, 2);
  EXPECT_EQ(rs, 1);
  EXPECT_EQ(mp_ar, 2);
}

TEST(AstraText, MalformedFilesNameLineAndField) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");
  auto expect_error = [&](const std::string& text, const std::string& needle) {
    try {
      workload::parse_astra_text(text, "w.txt", net);
      ADD_FAILURE() << "no error for: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("DATA\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8\n", "w.txt:3");  // 11 fields
  expect_error("DATA\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLSHUFFLE 8 0\n", "wg_type");
  expect_error("DATA\n1\nl0 -1 x NONE 0 1 NONE 0 1 ALLREDUCE 8 0\n", "fwd_compute");
  expect_error("DATA\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE -8 0\n", "wg_size");
  expect_error("DATA\n2\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 0\n",
               "w.txt:4: end of file: the number of layers (line 2) announces 2 but the file has 1");
  expect_error("DATA\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 0\nl1\n", "w.txt:4");
  expect_error("HYBRID_TRANSFORMER\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 0\n", "model_parallel_NPU_group");
  expect_error("PIPELINE\n1\n", "unknown parallelism");
  expect_error("HYBRID_DLRM\n2\nl0 -1 1 ALLTOALL 8 1 NONE 0 1 NONE 0 0\nl1 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 0\n",
               "last bottom-MLP layer");
  expect_error("HYBRID_DLRM 1\n2\nl0 -1 1 ALLTOALL 8 1 NONE 0 1 NONE 0 0\nl1 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 0\n",
               "no top layer");
  expect_error("HYBRID_DLRM 0\n2\nl0 -1 1 ALLREDUCE 8 1 NONE 0 1 NONE 0 0\nl1 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 0\n",
               "only ALLTOALL");
  expect_error("DATA\nmany\n", "w.txt:2");
  // A pipeline or gradient accumulation the importer would drop is an error, not ignored.
  expect_error("HYBRID_TRANSFORMER model_parallel_NPU_group: 16 pp: 4\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 0\n",
               "'pp: 4'");
  expect_error("DATA ga: 2\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 0\n", "w.txt:1");
  expect_error("DATA pp: two\n1\nl0 -1 1 NONE 0 1 NONE 0 1 ALLREDUCE 8 0\n", "pp must be an integer");
}

TEST(Zoo, UnknownNameSuggests) {
  try {
    workload::zoo_model("resnet125");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("resnet152"), std::string::npos);
  }
}

TEST(ComputeModel, RooflineTimeIsTheSlowerOfFlopsAndBytes) {
  const auto a100 = workload::ComputeModel::a100_fp16();
  // 312 TFLOP/s: 312e3 FLOP per ns; 1555 GB/s: 1555 bytes per ns.
  EXPECT_DOUBLE_EQ(a100.time_ns(312e6, 0), 1000);
  EXPECT_DOUBLE_EQ(a100.time_ns(1, 1555e3), 1000);
  EXPECT_DOUBLE_EQ(a100.time_ns(312e6, 1555e3 * 2), 2000);
}

TEST(Zoo, BatchOptionScalesWorkNotParameters) {
  const auto zoo = workload::zoo_model("resnet152");
  const auto eight = workload::zoo_model("resnet152", 8);
  EXPECT_EQ(zoo.model.batch_per_npu, 32);
  EXPECT_EQ(eight.model.batch_per_npu, 8);
  // Every layer's FLOPs and activations are per mini-batch: 8 / 32 of the zoo's; parameters equal.
  ASSERT_EQ(eight.model.layers.size(), zoo.model.layers.size());
  for (std::size_t i = 0; i < zoo.model.layers.size(); ++i) {
    EXPECT_DOUBLE_EQ(eight.model.layers[i].forward_flops * 4, zoo.model.layers[i].forward_flops);
    EXPECT_DOUBLE_EQ(eight.model.layers[i].output_elements * 4, zoo.model.layers[i].output_elements);
    EXPECT_DOUBLE_EQ(eight.model.layers[i].params, zoo.model.layers[i].params);
  }
  EXPECT_EQ(workload::zoo_model("gnmt", 0).model.batch_per_npu, 128);  // 0: the zoo's
  EXPECT_EQ(workload::zoo_model("dlrm", 3).model.batch_per_npu, 3);
  const auto tf = workload::zoo_model("transformer-1t", 2);  // the parallelism stays the zoo's
  EXPECT_EQ(tf.parallelism.mp_npus, 128);
  EXPECT_TRUE(tf.parallelism.zero2);
  EXPECT_THROW(workload::zoo_model("resnet152", -1), InputError);
}

TEST(ComputeModel, ScaledDividesEveryRooflineTime) {
  const auto fast = workload::ComputeModel::a100_fp16().scaled(4);
  // A100: 312e3 FLOP and 1555 bytes per ns; 4x: 1248e3 and 6220.
  EXPECT_DOUBLE_EQ(fast.time_ns(312e6, 0), 250);   // compute-bound
  EXPECT_DOUBLE_EQ(fast.time_ns(1, 1555e3), 250);  // memory-bound
  EXPECT_DOUBLE_EQ(workload::ComputeModel::a100_fp16().scaled(0.5).time_ns(312e6, 0), 2000);
}

TEST(Parallelism, ModelParallelDimsArePrefixUpToTheLimit) {
  const auto homo = *net::find_preset("3D-SW_SW_SW_homo");  // 16 x 8 x 8
  EXPECT_EQ(workload::model_parallel_dims(homo, 128), (std::vector<int>{0, 1}));
  const auto sw2 = *net::find_preset("2D-SW_SW");  // 16 x 64
  EXPECT_EQ(workload::model_parallel_dims(sw2, 128), (std::vector<int>{0}));
  const auto ring4 = *net::find_preset("4D-Ring_SW_SW_SW");  // 4 x 4 x 8 x 8
  EXPECT_EQ(workload::model_parallel_dims(ring4, 128), (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(workload::model_parallel_dims(homo, 1).empty());
}

// The explicit parallel layout (--tp / --dp / --pp, YAML tp / dp / pp): expected groups by hand
// from the presets' dimension sizes.
std::string layout_error(const workload::ZooEntry& e, const net::Network& net) {
  try {
    workload::parallel_layout(e.model, e.parallelism, net, workload::layout_fields(e));
  } catch (const InputError& err) {
    return err.what();
  }
  return "";
}

TEST(ParallelLayout, GroupsByHand) {
  const auto homo = *net::find_preset("3D-SW_SW_SW_homo");  // 16 x 8 x 8
  auto resnet = workload::zoo_model("resnet152");
  auto l = workload::parallel_layout(resnet.model, resnet.parallelism, homo);
  EXPECT_EQ(l.tp, (workload::ParallelGroup{{}, 1}));
  EXPECT_EQ(l.dp, (workload::ParallelGroup{{0, 1, 2}, 1024}));
  EXPECT_EQ(l.pp, (workload::ParallelGroup{{}, 1}));
  EXPECT_FALSE(l.embeddings);
  EXPECT_TRUE(l.ep.dims.empty());
  auto t1t = workload::zoo_model("transformer-1t");  // up to 128 NPUs: 16 x 8
  l = workload::parallel_layout(t1t.model, t1t.parallelism, homo);
  EXPECT_EQ(l.tp, (workload::ParallelGroup{{0, 1}, 128}));
  EXPECT_EQ(l.dp, (workload::ParallelGroup{{2}, 8}));
  EXPECT_EQ(workload::to_string(l), "TP 128 (dims 0, 1) x DP 8 (dim 2) x PP 1 (no dimension)");
  t1t.parallelism.tp = 16;
  t1t.parallelism.dp = 8;
  t1t.parallelism.pp_stages = 8;
  l = workload::parallel_layout(t1t.model, t1t.parallelism, homo);
  EXPECT_EQ(l.tp, (workload::ParallelGroup{{0}, 16}));
  EXPECT_EQ(l.dp, (workload::ParallelGroup{{1}, 8}));
  EXPECT_EQ(l.pp, (workload::ParallelGroup{{2}, 8}));
  const auto ring4 = *net::find_preset("4D-Ring_SW_SW_SW");  // 4 x 4 x 8 x 8
  t1t.parallelism.dp = 0;
  t1t.parallelism.pp_stages = 1;
  l = workload::parallel_layout(t1t.model, t1t.parallelism, ring4);  // tp 16 = 4 x 4
  EXPECT_EQ(l.tp, (workload::ParallelGroup{{0, 1}, 16}));
  EXPECT_EQ(l.dp, (workload::ParallelGroup{{2, 3}, 64}));
  auto dlrm = workload::zoo_model("dlrm");
  l = workload::parallel_layout(dlrm.model, dlrm.parallelism, homo);
  EXPECT_TRUE(l.embeddings);
  EXPECT_EQ(l.dp.npus, 1024);
  auto moe = workload::zoo_model("moe");  // experts over the first dimensions up to 128 NPUs
  l = workload::parallel_layout(moe.model, moe.parallelism, homo);
  EXPECT_EQ(l.ep, (workload::ParallelGroup{{0, 1}, 128}));
}

TEST(ParallelLayout, TheDagsTrafficRunsOnTheLayoutsDimensions) {
  const auto homo = *net::find_preset("3D-SW_SW_SW_homo");
  auto t1t = workload::zoo_model("transformer-1t");
  t1t.parallelism.iterations = 1;
  t1t.parallelism.tp = 16;
  t1t.parallelism.pp_stages = 8;
  t1t.parallelism.microbatches = 8;
  const auto dag = workload::build_training_dag(t1t.model, t1t.parallelism, homo);
  ASSERT_TRUE(dag.layout.has_value());
  EXPECT_EQ(dag.layout->tp.dims, (std::vector<int>{0}));
  std::map<workload::CommGroup, std::set<std::vector<int>>> dims;
  for (const auto& n : dag.nodes)
    if (n.kind == NodeKind::kComm) dims[n.group].insert(n.dims);
  EXPECT_EQ(dims[workload::CommGroup::kModelParallel], (std::set<std::vector<int>>{{0}}));
  EXPECT_EQ(dims[workload::CommGroup::kDataParallel], (std::set<std::vector<int>>{{1}}));
  EXPECT_EQ(dims[workload::CommGroup::kPipeline], (std::set<std::vector<int>>{{2}}));
}

TEST(ParallelLayout, ErrorsNameTheSetting) {
  const auto homo = *net::find_preset("3D-SW_SW_SW_homo");  // 16 x 8 x 8
  auto t1t = workload::zoo_model("transformer-1t");
  t1t.parallelism.tp = 8;  // no prefix of 16 x 8 x 8 has 8 NPUs
  auto e = layout_error(t1t, homo);
  EXPECT_EQ(e.rfind("tp: ", 0), 0u) << e;
  EXPECT_NE(e.find("1, 16, 128, 1024"), std::string::npos) << e;
  t1t.parallelism.tp = 16;
  t1t.parallelism.dp = 16;  // 16 x 16 x 1 = 256, not 1024: dp must be 64
  e = layout_error(t1t, homo);
  EXPECT_EQ(e.rfind("dp: ", 0), 0u) << e;
  EXPECT_NE(e.find("= 256 NPUs, but the network has 1024"), std::string::npos) << e;
  EXPECT_NE(e.find("dp is 64"), std::string::npos) << e;
  t1t.parallelism.dp = 64;
  EXPECT_EQ(layout_error(t1t, homo), "");
  for (const char* name : {"resnet152", "gnmt", "dlrm", "moe"}) {
    auto m = workload::zoo_model(name);
    m.parallelism.tp = 16;
    EXPECT_NE(layout_error(m, homo).find("takes no tensor parallelism"), std::string::npos) << name;
    m.parallelism.tp = 1;  // one NPU per group is no tensor parallelism: fine
    EXPECT_EQ(layout_error(m, homo), "") << name;
  }
}

TEST(WorkloadYaml, LayoutKeysAndTheirErrors) {
  const std::string layers = "layers:\n  - {forward_flops: 1, mp_all_reduce: true}\n";
  auto e =
      workload::parse_workload_yaml("batch_per_npu: 1\nparallelism:\n  tp: 2\n  dp: 4\n  pp: 1\n" + layers, "w.yaml");
  EXPECT_EQ(e.parallelism.tp, 2);
  EXPECT_EQ(e.parallelism.dp, 4);
  EXPECT_EQ(e.parallelism.pp_stages, 1);
  EXPECT_EQ(e.origin.at("tp"), "w.yaml:3: field 'parallelism.tp'");
  EXPECT_EQ(workload::layout_fields(e).dp, "w.yaml:4: field 'parallelism.dp'");
  // 2 x 4 = 8 NPUs on a network of 2 x 2 x 2 = 8: dims 0 | 1, 2.
  net::Network cube;
  for (int k = 0; k < 3; ++k) cube.dims.push_back(net::Dimension{net::DimKind::kRing, 2, 8.0, 1, 0});
  const auto l = workload::parallel_layout(e.model, e.parallelism, cube, workload::layout_fields(e));
  EXPECT_EQ(l.tp, (workload::ParallelGroup{{0}, 2}));
  EXPECT_EQ(l.dp, (workload::ParallelGroup{{1, 2}, 4}));
  e.parallelism.dp = 2;
  EXPECT_EQ(layout_error(e, cube).rfind("w.yaml:4: field 'parallelism.dp': tp 2 x dp 2 x pp 1 = 4 NPUs", 0), 0u)
      << layout_error(e, cube);
  for (const auto& [both, line] :
       {std::pair{"  tp: 2\n  mp_npus: 2\n", "w.yaml:3"}, std::pair{"  pp_stages: 1\n  pp: 1\n", "w.yaml:4"}}) {
    try {
      workload::parse_workload_yaml(std::string("batch_per_npu: 1\nparallelism:\n") + both + layers, "w.yaml");
      ADD_FAILURE() << both;
    } catch (const InputError& err) {
      EXPECT_EQ(std::string(err.what()).rfind(line, 0), 0u) << err.what();
      EXPECT_NE(std::string(err.what()).find("not both"), std::string::npos) << err.what();
    }
  }
}

TEST(WorkloadYaml, GroupsLargerThanTheNetworkAreErrorsAtTheirField) {
  net::Network four;  // 2 x 2 = 4 NPUs
  for (int k = 0; k < 2; ++k) four.dims.push_back(net::Dimension{net::DimKind::kRing, 2, 8.0, 1, 0});
  const std::string layers = "layers:\n  - {forward_flops: 1}\n";
  auto e = workload::parse_workload_yaml("batch_per_npu: 1\nparallelism:\n  mp_npus: 8\n" + layers, "w.yaml");
  try {
    workload::check_groups_fit(e, four);
    ADD_FAILURE() << "mp_npus 8 on 4 NPUs";
  } catch (const InputError& err) {
    EXPECT_EQ(std::string(err.what()),
              "w.yaml:3: field 'parallelism.mp_npus': a group of 8 NPUs, but the network "
              "(2x2) has 4");
  }
  e = workload::parse_workload_yaml("batch_per_npu: 1\nparallelism:\n  ep_npus: 4\n" + layers, "w.yaml");
  EXPECT_NO_THROW(workload::check_groups_fit(e, four));  // exactly the network: fine
  EXPECT_NO_THROW(workload::check_groups_fit(workload::zoo_model("transformer-1t"), four));  // the zoo's "up to 128"
}

double comm_bytes(const workload::Dag& dag, CollectiveKind op, workload::CommGroup group) {
  double b = 0;
  for (const auto& n : dag.nodes)
    if (n.kind == NodeKind::kComm && n.op == op && n.group == group && n.iteration == 0) b += n.bytes;
  return b;
}

TEST(Parallelism, DataParallelAllReducesEveryGradientOnce) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");
  const auto model = workload::resnet152(32);
  workload::ParallelismConfig p;
  p.iterations = 2;
  for (double bucket : {0.0, 25e6, 1e12}) {
    p.bucket_bytes = bucket;
    const auto dag = workload::build_training_dag(model, p, net);
    // FP16 gradients: 2 bytes per parameter, all of them, in every iteration.
    EXPECT_DOUBLE_EQ(comm_bytes(dag, CollectiveKind::kAllReduce, workload::CommGroup::kDataParallel),
                     2 * model.total_params());
    int ars = 0;
    for (const auto& n : dag.nodes) {
      if (n.kind != NodeKind::kComm || n.iteration != 0) continue;
      ++ars;
      EXPECT_EQ(n.dims, (std::vector<int>{0, 1, 2}));
    }
    if (bucket == 0) {
      EXPECT_EQ(ars, 156);  // every layer has parameters
    }
    if (bucket == 1e12) {
      EXPECT_EQ(ars, 1);
    }
  }
}

TEST(Parallelism, PerLayerSplitOrReplicatedByHand) {
  // Two layers on 2 x 2 NPUs, model-parallel group of 2 (dimension 0), data parallel over
  // dimension 1. Layer a split, layer b replicated (ParallelismConfig::layer_mp = {1, 0}).
  workload::Model m;
  m.name = "two";
  m.bytes_per_element = 2;
  for (const char* name : {"a", "b"}) {
    workload::Layer l;
    l.name = name;
    l.forward_flops = 1000;
    l.params = 100;
    l.input_elements = 10;
    l.output_elements = 20;
    m.layers.push_back(l);  // mp_all_reduce stays false: explicit choices make split layers all-reduce
  }
  workload::ParallelismConfig p;
  p.mp_npus = 2;
  p.iterations = 1;
  p.layer_mp = {true, false};
  const auto dag = workload::build_training_dag(m, p, workload::logical_network(p, 4));
  std::map<std::string, const workload::Node*> by_name;
  for (const auto& n : dag.nodes) by_name[n.name] = &n;
  // Split a: half the FLOPs; replicated b: all of them.
  EXPECT_DOUBLE_EQ(by_name.at("fwd a it0")->flops, 500);
  EXPECT_DOUBLE_EQ(by_name.at("fwd b it0")->flops, 1000);
  EXPECT_DOUBLE_EQ(by_name.at("wg a it0")->flops, 500);
  EXPECT_DOUBLE_EQ(by_name.at("wg b it0")->flops, 1000);
  // a's output (20 elements x 2 B) all-reduced over the group in the forward pass; b's input
  // gradient (10 x 2 B) is not (b is replicated), and a, the first layer, has none.
  ASSERT_TRUE(by_name.count("mp fwd-ar a it0"));
  EXPECT_DOUBLE_EQ(by_name.at("mp fwd-ar a it0")->bytes, 40);
  EXPECT_EQ(by_name.at("mp fwd-ar a it0")->dims, (std::vector<int>{0}));
  EXPECT_FALSE(by_name.count("mp fwd-ar b it0"));
  EXPECT_FALSE(by_name.count("mp ig-ar b it0"));
  // Split a before replicated b: a's output gradient (20 x 2 B) is gathered over the group
  // before a's backward; nothing is gathered in the forward pass.
  ASSERT_TRUE(by_name.count("mp grad-ag a it0"));
  EXPECT_DOUBLE_EQ(by_name.at("mp grad-ag a it0")->bytes, 40);
  EXPECT_EQ(by_name.at("mp grad-ag a it0")->op, CollectiveKind::kAllGather);
  EXPECT_FALSE(by_name.count("mp fwd-ag b it0"));
  // Gradients: a's half (50 params x 2 B) over the data-parallel dimension; b's whole 100 x 2 B
  // over all NPUs.
  ASSERT_TRUE(by_name.count("dp ar a it0"));
  EXPECT_DOUBLE_EQ(by_name.at("dp ar a it0")->bytes, 100);
  EXPECT_EQ(by_name.at("dp ar a it0")->dims, (std::vector<int>{1}));
  ASSERT_TRUE(by_name.count("dp ar b it0"));
  EXPECT_DOUBLE_EQ(by_name.at("dp ar b it0")->bytes, 200);
  EXPECT_EQ(by_name.at("dp ar b it0")->dims, (std::vector<int>{0, 1}));
  // The other way round: b split all-reduces its output and its input gradient (10 x 2 B).
  p.layer_mp = {false, true};
  const auto flipped = workload::build_training_dag(m, p, workload::logical_network(p, 4));
  std::map<std::string, const workload::Node*> f;
  for (const auto& n : flipped.nodes) f[n.name] = &n;
  EXPECT_FALSE(f.count("mp fwd-ar a it0"));
  // Replicated a before split b: b gathers its input (10 x 2 B) in the forward pass.
  ASSERT_TRUE(f.count("mp fwd-ag b it0"));
  EXPECT_DOUBLE_EQ(f.at("mp fwd-ag b it0")->bytes, 20);
  EXPECT_FALSE(f.count("mp grad-ag a it0"));
  ASSERT_TRUE(f.count("mp ig-ar b it0"));
  EXPECT_DOUBLE_EQ(f.at("mp ig-ar b it0")->bytes, 20);
  // One entry per layer, or none.
  p.layer_mp = {true};
  EXPECT_THROW(workload::build_training_dag(m, p, workload::logical_network(p, 4)), InputError);
}

TEST(Parallelism, WithoutOverlapGradientsWaitForTheEndOfBackprop) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");
  workload::ParallelismConfig p;
  p.iterations = 1;
  p.overlap_dp = false;
  const auto dag = workload::build_training_dag(workload::resnet152(32), p, net);
  int last_backward = -1;
  for (size_t i = 0; i < dag.nodes.size(); ++i)
    if (dag.nodes[i].kind == NodeKind::kCompute && dag.nodes[i].compute != workload::ComputeKind::kOptimizer)
      last_backward = static_cast<int>(i);
  int comms = 0;
  for (const auto& n : dag.nodes) {
    if (n.kind != NodeKind::kComm) continue;
    ++comms;
    EXPECT_NE(std::find(n.deps.begin(), n.deps.end(), last_backward), n.deps.end()) << n.name;
  }
  EXPECT_EQ(comms, 156);
}

TEST(Parallelism, DlrmAllToAllOverlapsTheBottomMlp) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");
  auto entry = workload::zoo_model("dlrm");
  entry.parallelism.iterations = 1;
  const auto dag = workload::build_training_dag(entry.model, entry.parallelism, net);
  // 512 samples x 26 tables x 128 FP16 values, over every dimension, forward and backward.
  EXPECT_DOUBLE_EQ(comm_bytes(dag, CollectiveKind::kAllToAll, workload::CommGroup::kModelParallel),
                   2 * 512.0 * 26 * 128 * 2);
  int a2a = -1, top0 = -1, bottom0 = -1;
  for (size_t i = 0; i < dag.nodes.size(); ++i) {
    const auto& n = dag.nodes[i];
    if (n.kind == NodeKind::kComm && n.op == CollectiveKind::kAllToAll && a2a < 0) a2a = static_cast<int>(i);
    if (n.name == "fwd top_mlp0 it0") top0 = static_cast<int>(i);
    if (n.name == "fwd bot_mlp0 it0") bottom0 = static_cast<int>(i);
  }
  ASSERT_GE(a2a, 0);
  ASSERT_GE(top0, 0);
  ASSERT_GE(bottom0, 0);
  const auto& top = dag.nodes[static_cast<size_t>(top0)].deps;
  const auto& bottom = dag.nodes[static_cast<size_t>(bottom0)].deps;
  EXPECT_NE(std::find(top.begin(), top.end(), a2a), top.end());           // the top MLP waits
  EXPECT_EQ(std::find(bottom.begin(), bottom.end(), a2a), bottom.end());  // the bottom MLP does not
  // MLP parameters (2.37 M) all-reduced data-parallel.
  EXPECT_DOUBLE_EQ(comm_bytes(dag, CollectiveKind::kAllReduce, workload::CommGroup::kDataParallel),
                   2 * entry.model.total_params());
}

TEST(Parallelism, TopoOptBertTensorParallelInTheServer) {
  // Two servers of four GPUs: dim 0 (4) is the model-parallel group, dim 1 (2) data-parallel.
  net::Network net;
  net.name = "4x2";
  net.dims.push_back(net::Dimension{net::DimKind::kFullyConnected, 4, 8.0, 1, 0});
  net.dims.push_back(net::Dimension{net::DimKind::kFullyConnected, 2, 8.0, 1, 0});
  auto entry = workload::zoo_model("topoopt-bert");
  entry.parallelism.iterations = 1;
  const auto dag = workload::build_training_dag(entry.model, entry.parallelism, net);
  int mp = 0, dp = 0;
  for (const auto& n : dag.nodes) {
    if (n.kind != NodeKind::kComm) continue;
    ASSERT_EQ(n.op, CollectiveKind::kAllReduce) << n.name;
    if (n.group == workload::CommGroup::kModelParallel) {
      ++mp;
      EXPECT_EQ(n.dims, (std::vector<int>{0})) << n.name;
    } else {
      ++dp;
      EXPECT_EQ(n.dims, (std::vector<int>{1})) << n.name;
    }
  }
  // Forward: embeddings + 24 blocks = 25 all-reduces; input gradients: the 24 blocks (the
  // first layer has none) = 24. Each 16 x 64 tokens x 1024 FP32 values = 4,194,304 bytes.
  EXPECT_EQ(mp, 49);
  EXPECT_DOUBLE_EQ(comm_bytes(dag, CollectiveKind::kAllReduce, workload::CommGroup::kModelParallel), 49 * 4194304.0);
  // One gradient all-reduce per layer, each of the NPU's quarter of the layer: 4 bytes x
  // 182,937,600 / 4 = 182,937,600 bytes in all.
  EXPECT_EQ(dp, 25);
  EXPECT_DOUBLE_EQ(comm_bytes(dag, CollectiveKind::kAllReduce, workload::CommGroup::kDataParallel), 182937600.0);
}

TEST(Parallelism, TopoOptDlrmAndCandleTraffic) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");
  auto dlrm = workload::zoo_model("topoopt-dlrm");
  dlrm.parallelism.iterations = 1;
  const auto d = workload::build_training_dag(dlrm.model, dlrm.parallelism, net);
  // 128 samples x 64 tables x 128 FP32 values = 4,194,304 bytes, forward and backward.
  EXPECT_DOUBLE_EQ(comm_bytes(d, CollectiveKind::kAllToAll, workload::CommGroup::kModelParallel), 2 * 4194304.0);
  int a2a = 0;
  for (const auto& n : d.nodes) {
    if (n.kind != NodeKind::kComm || n.op != CollectiveKind::kAllToAll) continue;
    ++a2a;
    EXPECT_EQ(n.dims, (std::vector<int>{0, 1, 2}));
  }
  EXPECT_EQ(a2a, 2);
  // MLP gradients: 4 bytes x 306,321,409 parameters.
  EXPECT_DOUBLE_EQ(comm_bytes(d, CollectiveKind::kAllReduce, workload::CommGroup::kDataParallel), 4 * 306321409.0);

  auto candle = workload::zoo_model("topoopt-candle");
  candle.parallelism.iterations = 1;
  const auto c = workload::build_training_dag(candle.model, candle.parallelism, net);
  int ars = 0;
  for (const auto& n : c.nodes) {
    if (n.kind != NodeKind::kComm) continue;
    ++ars;  // data parallel only: gradient all-reduces over every dimension
    EXPECT_EQ(n.op, CollectiveKind::kAllReduce);
    EXPECT_EQ(n.group, workload::CommGroup::kDataParallel);
    EXPECT_EQ(n.dims, (std::vector<int>{0, 1, 2}));
  }
  EXPECT_EQ(ars, 25);
  EXPECT_DOUBLE_EQ(comm_bytes(c, CollectiveKind::kAllReduce, workload::CommGroup::kDataParallel), 4 * 6429687809.0);
}

TEST(Parallelism, MixtureOfExpertsAllToAllAndGradientGroups) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");  // 16 x 8 x 8: experts over dims 1-2
  auto entry = workload::zoo_model("moe");
  entry.parallelism.iterations = 1;
  const auto dag = workload::build_training_dag(entry.model, entry.parallelism, net);
  const double tokens_bytes = 4 * 2048.0 * 2048 * 2;
  // 12 expert layers x (dispatch + combine forward, dispatch + combine backward).
  EXPECT_DOUBLE_EQ(comm_bytes(dag, CollectiveKind::kAllToAll, workload::CommGroup::kModelParallel),
                   12 * 4 * tokens_bytes);
  for (const auto& n : dag.nodes) {
    if (n.kind != NodeKind::kComm) continue;
    std::vector<int> expected = {0, 1, 2};  // dense gradients: every NPU
    if (n.op == CollectiveKind::kAllToAll)
      expected = {0, 1};
    else if (n.name.find("experts") != std::string::npos)
      expected = {2};  // replicas of one expert
    EXPECT_EQ(n.dims, expected) << n.name;
  }
}

TEST(Parallelism, Zero2ModelParallelTraffic) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");
  const auto entry = workload::zoo_model("transformer-1t");
  auto p = entry.parallelism;
  p.iterations = 1;
  const auto dag = workload::build_training_dag(entry.model, p, net);
  const double h = 25600, tokens = 16 * 2048.0;
  // Per block: a forward, a recomputed forward and (except the first block) an
  // input-gradient all-reduce of tokens x h FP16 values over the 128 model-parallel NPUs.
  EXPECT_DOUBLE_EQ(comm_bytes(dag, CollectiveKind::kAllReduce, workload::CommGroup::kModelParallel),
                   (256 * 3 - 1) * tokens * h * 2);
  // ZeRO-2: gradients reduce-scattered and parameters all-gathered over dim3, 2 bytes per
  // parameter of the NPU's 1/128 model slice.
  EXPECT_DOUBLE_EQ(comm_bytes(dag, CollectiveKind::kReduceScatter, workload::CommGroup::kDataParallel),
                   2 * entry.model.total_params() / 128);
  EXPECT_DOUBLE_EQ(comm_bytes(dag, CollectiveKind::kAllGather, workload::CommGroup::kDataParallel),
                   2 * entry.model.total_params() / 128);
  for (const auto& n : dag.nodes) {
    if (n.kind != NodeKind::kComm) continue;
    const std::vector<int> expected =
        n.group == workload::CommGroup::kModelParallel ? std::vector<int>{0, 1} : std::vector<int>{2};
    EXPECT_EQ(n.dims, expected);
  }
}

sim::DagResult simulate(const std::string& name, const net::Network& net, const std::string& scheduler,
                        int iterations) {
  auto entry = workload::zoo_model(name);
  entry.parallelism.iterations = iterations;
  const auto dag = workload::build_training_dag(entry.model, entry.parallelism, net);
  sim::WorkloadSimOptions o;
  o.scheduler = sched::parse_scheduler(scheduler);
  return sim::simulate_workload(dag, net, o).result;
}

TEST(Workloads, IdealBeatsThemisBeatsBaselineOnEveryTopology) {
  for (const auto& name : workload::zoo_names()) {
    for (const auto& net : net::table2_presets()) {
      SCOPED_TRACE(name + " on " + net.name);
      const auto base = simulate(name, net, "baseline", 2);
      const auto scf = simulate(name, net, "themis-scf", 2);
      const auto ideal = simulate(name, net, "ideal", 2);
      EXPECT_LE(ideal.total_ns, scf.total_ns * (1 + 1e-9));
      // When the gradients hide under back-propagation (ResNet-152 with the A100 roofline),
      // only the last, latency-bound bucket is exposed, and Themis's reordering of its
      // 300-byte chunks among those still in flight can cost up to ~100 ns of 8 ms.
      // DLRM's collectives (0.1-3.4 MB over 1024 NPUs) are latency-bound: Themis balances
      // bandwidth, and SCF across concurrent all-to-alls and all-reduces can delay the
      // all-to-all the top MLP waits for (docs/workloads.md). No ordering is claimed there.
      if (name != "dlrm") {
        EXPECT_LE(scf.total_ns, base.total_ns * (1 + 1e-4));
      }
      if (name == "transformer-1t" && workload::model_parallel_dims(net, 128).size() > 1) {
        EXPECT_LT(scf.total_ns, base.total_ns);
      }
      // Same DAG, same compute.
      EXPECT_DOUBLE_EQ(base.compute_ns, scf.compute_ns);
      EXPECT_DOUBLE_EQ(base.compute_ns, ideal.compute_ns);
      for (const auto* r : {&base, &scf, &ideal}) {
        EXPECT_NEAR(r->compute_ns + r->exposed_comm_ns, r->total_ns, 1e-6 * r->total_ns);
        EXPECT_NEAR(r->exposed_dp_comm_ns + r->exposed_mp_comm_ns, r->exposed_comm_ns, 1e-6 * r->total_ns);
        EXPECT_LE(r->avg_bw_utilization, 1 + 1e-9);
      }
      if (name == "resnet152") {
        EXPECT_EQ(base.exposed_mp_comm_ns, 0);
      }
      EXPECT_LE(ideal.total_ns, base.total_ns * (1 + 1e-9));
    }
  }
}

TEST(Workloads, Transformer1TDataParallelPartIsOneDimension) {
  // The data-parallel group is the last dimension on every Table 2 topology except 2D-SW_SW,
  // where the model-parallel group is dim1 only; a one-dimension collective has one schedule.
  for (const auto& net : net::table2_presets()) {
    const auto mp = workload::model_parallel_dims(net, 128);
    if (static_cast<int>(mp.size()) != net.num_dims() - 1) continue;
    SCOPED_TRACE(net.name);
    const auto base = simulate("transformer-1t", net, "baseline", 1);
    const auto fifo = simulate("transformer-1t", net, "themis-fifo", 1);
    EXPECT_DOUBLE_EQ(base.forward_compute_ns, fifo.forward_compute_ns);
    if (mp.size() == 1) {
      // 2D-SW_SW: both groups are one dimension each; every scheduler gives the same run.
      EXPECT_DOUBLE_EQ(base.total_ns, fifo.total_ns);
      EXPECT_DOUBLE_EQ(base.exposed_dp_comm_ns, fifo.exposed_dp_comm_ns);
    } else {
      // Only the model-parallel collectives span several dimensions: Themis helps there.
      EXPECT_GT(base.exposed_mp_comm_ns, fifo.exposed_mp_comm_ns);
    }
  }
}

}  // namespace
}  // namespace chorus
