// Pipeline parallelism: the schedules against the published figures, the layer partition and
// the stages' placement by hand, and whole timelines derived by hand (workload/pipeline.h,
// the pipeline generator in workload/parallelism.cpp, the per-stage DAG executor).
#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "net/presets.h"
#include "sim/dag_executor.h"
#include "workload/parallelism.h"
#include "workload/pipeline.h"
#include "workload/workload_yaml.h"
#include "workload/zoo.h"

namespace chorus {
namespace {

using workload::PipelineOp;
using workload::PipelineSchedule;

// "F3 B0 ..." from a schedule (1-based microbatches are the figures'; ours are 0-based).
std::string ops_text(const std::vector<PipelineOp>& ops) {
  std::string s;
  for (const auto& op : ops)
    s += (s.empty() ? "" : " ") + std::string(op.forward ? "F" : "B") + std::to_string(op.microbatch);
  return s;
}

TEST(Pipeline, OneFOneBMatchesMegatronFigure4) {
  // Narayanan et al., SC '21, Fig. 4 (top): 4 devices, 8 micro-batches. Device 1 runs
  // forwards 1-4, then alternates backward 1, forward 5, ... and ends with backwards 5-8;
  // device 4 alternates from the start.
  EXPECT_EQ(ops_text(workload::pipeline_ops(PipelineSchedule::kOneFOneB, 4, 0, 8)),
            "F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7");
  EXPECT_EQ(ops_text(workload::pipeline_ops(PipelineSchedule::kOneFOneB, 4, 2, 8)),
            "F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7");
  EXPECT_EQ(ops_text(workload::pipeline_ops(PipelineSchedule::kOneFOneB, 4, 3, 8)),
            "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7");
  // Fewer micro-batches than stages: the warm-up is all of them.
  EXPECT_EQ(ops_text(workload::pipeline_ops(PipelineSchedule::kOneFOneB, 4, 0, 2)), "F0 F1 B0 B1");
  // GPipe (Huang et al. 2019, Fig. 2c): every forward, then every backward.
  EXPECT_EQ(ops_text(workload::pipeline_ops(PipelineSchedule::kGPipe, 4, 3, 3)), "F0 F1 F2 B0 B1 B2");
  EXPECT_EQ(workload::parse_pipeline_schedule("gpipe", "f"), PipelineSchedule::kGPipe);
  EXPECT_THROW(workload::parse_pipeline_schedule("1f2b", "f"), InputError);
}

TEST(Pipeline, PartitionMinimisesTheLargestStageByHand) {
  using V = std::vector<int>;
  // [1 1 1 1 | 4]: 4; any other cut puts 4 with something.
  EXPECT_EQ(workload::partition_layers({1, 1, 1, 1, 4}, 2), (V{0, 4, 5}));
  // [3 1 | 1 3]: 4, against 5 for the other cuts.
  EXPECT_EQ(workload::partition_layers({3, 1, 1, 3}, 2), (V{0, 2, 4}));
  // Equal layers, 3 stages of 4: the best is 4; front first: [2 2 | 2 | 2].
  EXPECT_EQ(workload::partition_layers({2, 2, 2, 2}, 3), (V{0, 2, 3, 4}));
  EXPECT_EQ(workload::partition_layers({5, 5, 5}, 3), (V{0, 1, 2, 3}));
  EXPECT_THROW(workload::partition_layers({1, 1}, 3), InputError);
}

TEST(Pipeline, StagesOnTheLastDimensionsInGrayCodeOrder) {
  net::Network n;
  n.dims = {{net::DimKind::kSwitch, 2, 100, 1, 0},
            {net::DimKind::kRing, 4, 100, 2, 0},
            {net::DimKind::kSwitch, 8, 100, 1, 0}};
  EXPECT_EQ(workload::pipeline_dims(n, 1, "f"), std::vector<int>{});
  EXPECT_EQ(workload::pipeline_dims(n, 8, "f"), std::vector<int>{2});
  EXPECT_EQ(workload::pipeline_dims(n, 32, "f"), (std::vector<int>{1, 2}));
  EXPECT_EQ(workload::pipeline_dims(n, 64, "f"), (std::vector<int>{0, 1, 2}));
  EXPECT_THROW(workload::pipeline_dims(n, 4, "f"), InputError);   // not a suffix
  EXPECT_THROW(workload::pipeline_dims(n, 16, "f"), InputError);  // 8 x 4 overshoots
  // 32 stages on 4 x 8: a reflected Gray code steps along the ring (dimension 1) three times,
  // then once along dimension 2, and again.
  const auto dims = workload::pipeline_dims(n, 32, "f");
  std::string steps;
  for (int s = 0; s + 1 < 32; ++s) steps += std::to_string(workload::stage_link_dim(n, dims, s));
  EXPECT_EQ(steps, "1112111211121112111211121112111");
}

// Layers of equal work for hand timelines: 1 FLOP/ns (peak 0.001 TFLOP/s), memory traffic
// negligible (1 parameter, activations of `act` elements: 2 * act bytes per mini-batch).
workload::Model uniform_model(int layers, double flops, double act, bool zero_first) {
  workload::Model m;
  m.name = "uniform";
  for (int l = 0; l < layers; ++l) {
    workload::Layer layer;
    layer.name = "L" + std::to_string(l);
    layer.forward_flops = zero_first && l == 0 ? 0 : flops;
    layer.params = zero_first && l == 0 ? 0 : 1;
    layer.input_elements = layer.output_elements = act;
    m.layers.push_back(layer);
  }
  return m;
}

workload::ComputeModel one_flop_per_ns() {
  workload::ComputeModel c;
  c.peak_tflops = 1e-3;
  c.memory_bandwidth_gbs = 1e6;
  return c;
}

sim::DagResult simulate(const workload::Dag& dag, const net::Network& n) {
  sim::WorkloadSimOptions o;
  o.scheduler = sched::parse_scheduler("baseline");
  o.chunks_per_collective = 1;
  o.compute = one_flop_per_ns();
  return sim::simulate_workload(dag, n, o).result;
}

workload::ParallelismConfig pipeline(int stages, int microbatches, PipelineSchedule schedule) {
  workload::ParallelismConfig c;
  c.pp_stages = stages;
  c.microbatches = microbatches;
  c.pipeline_schedule = schedule;
  c.iterations = 1;
  c.compute = one_flop_per_ns();
  return c;
}

// The pipeline on one dimension of `stages` NPUs, fully connected, one 8 Gb/s link per peer:
// 1 byte/ns between neighbouring stages, no latency.
net::Network line(int stages) {
  net::Network n;
  n.name = "line";
  n.dims.push_back(net::Dimension{net::DimKind::kFullyConnected, stages, 8.0, stages - 1, 0});
  return n;
}

TEST(Pipeline, UniformStagesTakeTheTextbookTime) {
  // P stages of one layer each (f = 1000 ns forward, b = 2000 ns input + weight gradient per
  // micro-batch; stage 0 also holds a zero-work input layer, so it too has an input gradient
  // to compute), nothing to send: both schedules take (M + P - 1)(f + b) (GPipe Sec. 2.2;
  // Narayanan et al. 2021 Sec. 2.2: 1F1B has GPipe's bubble), of which each stage computes
  // M (f + b) and waits (P - 1)(f + b).
  for (auto schedule : {PipelineSchedule::kOneFOneB, PipelineSchedule::kGPipe})
    for (auto [P, M] : {std::pair{4, 8}, std::pair{2, 1}, std::pair{3, 5}}) {
      const auto c = pipeline(P, M, schedule);
      const auto dag = workload::build_training_dag(uniform_model(P + 1, 1000.0 * M, 0, true), c, line(P));
      const auto r = simulate(dag, line(P));
      const std::string at = std::string(to_string(schedule)) + " P=" + std::to_string(P) + " M=" + std::to_string(M);
      EXPECT_DOUBLE_EQ(r.total_ns, (M + P - 1) * 3000.0) << at;
      EXPECT_DOUBLE_EQ(r.compute_ns, M * 3000.0) << at;
      EXPECT_DOUBLE_EQ(r.exposed_pp_comm_ns, (P - 1) * 3000.0) << at;
      EXPECT_DOUBLE_EQ(r.exposed_dp_comm_ns + r.exposed_mp_comm_ns, 0) << at;
      ASSERT_EQ(r.stages.size(), static_cast<size_t>(P > 1 ? P : 0)) << at;
      for (const auto& st : r.stages) EXPECT_DOUBLE_EQ(st.compute_ns + st.exposed_comm_ns, r.total_ns) << at;
    }
}

TEST(Pipeline, AStragglerStageStretchesThePipelineByTheTextbookAmount) {
  // As above (f = 1000, b = 2000 ns per micro-batch and stage, nothing to send), one stage's NPU at
  // speed 1/k (sim/stragglers.h: the stage computes k times slower). GPipe: the forwards leave the
  // last stage at (P - 1) f + M k f (each micro-batch waits for the slow stage, k f apart), the
  // backwards likewise take (P - 1) b + M k b after them: (f + b)(P - 1 + M k). 1F1B: the slow
  // stage alone computes M k (f + b).
  const int P = 4, M = 8;
  const double k = 2;
  for (int slow = 0; slow < P; ++slow)
    for (auto schedule : {PipelineSchedule::kGPipe, PipelineSchedule::kOneFOneB}) {
      const auto dag =
          workload::build_training_dag(uniform_model(P + 1, 1000.0 * M, 0, true), pipeline(P, M, schedule), line(P));
      sim::WorkloadSimOptions o;
      o.scheduler = sched::parse_scheduler("baseline");
      o.chunks_per_collective = 1;
      o.compute = one_flop_per_ns();
      o.speeds.assign(P, 1.0);
      o.speeds[static_cast<size_t>(slow)] = 1 / k;  // one dimension: NPU s runs stage s
      const auto r = sim::simulate_workload(dag, line(P), o).result;
      const std::string at = std::string(to_string(schedule)) + " slow stage " + std::to_string(slow);
      if (schedule == PipelineSchedule::kGPipe) {
        EXPECT_DOUBLE_EQ(r.total_ns, 3000.0 * (P - 1 + M * k)) << at;
      }
      EXPECT_GE(r.total_ns, M * k * 3000.0) << at;
      EXPECT_DOUBLE_EQ(r.stages[static_cast<size_t>(slow)].compute_ns, M * k * 3000.0) << at;
    }
}

TEST(Pipeline, TwoStagesTwoMicrobatchesByHand) {
  // 4 layers of 1000 FLOPs per mini-batch (500 ns per micro-batch), 100 activation elements
  // (2 bytes each, half per micro-batch: 100 bytes, 100 ns between the stages). Stage 0 holds
  // L0, L1; stage 1 holds L2, L3. Per micro-batch: F = 1000 on both stages; B = 1500 on
  // stage 0 (ig L1, wg L1, wg L0: the first layer has no input gradient), 2000 on stage 1
  // (ig L3, wg L3, ig L2, wg L2), whose input gradient leaves when its B is over.
  //   1F1B: stage 0  F0 0-1000 (act 1000-1100)  F1 1000-2000 (2000-2100)
  //         stage 1  F0 1100-2100  B0 2100-4100 (grad 4100-4200)  F1 4100-5100  B1 5100-7100 (7100-7200)
  //         stage 0  B0 4200-5700  B1 7200-8700
  //   GPipe: stage 1 F0 1100-2100 F1 2100-3100 B0 3100-5100 (grad 5100-5200) B1 5100-7100 (7100-7200)
  //          stage 0 B0 5200-6700 B1 7200-8700
  // Both end at 8700. Stage 0 computes 5000 and waits 3700; stage 1 computes 6000, waits 1100
  // for its first input and 1600 at the end for stage 0.
  for (auto schedule : {PipelineSchedule::kOneFOneB, PipelineSchedule::kGPipe}) {
    const auto c = pipeline(2, 2, schedule);
    const auto dag = workload::build_training_dag(uniform_model(4, 1000, 100, false), c, line(2));
    const auto r = simulate(dag, line(2));
    EXPECT_DOUBLE_EQ(r.total_ns, 8700) << to_string(schedule);
    ASSERT_EQ(r.stages.size(), 2u);
    EXPECT_DOUBLE_EQ(r.stages[0].compute_ns, 5000);
    EXPECT_DOUBLE_EQ(r.stages[0].exposed_pp_comm_ns, 3700);
    EXPECT_DOUBLE_EQ(r.stages[1].compute_ns, 6000);
    EXPECT_DOUBLE_EQ(r.stages[1].exposed_pp_comm_ns, 2700);
    EXPECT_DOUBLE_EQ(r.exposed_pp_comm_ns, 3200);
    // The second gradient transfer: 7100-7200 in both schedules.
    int seen = 0;
    for (size_t i = 0; i < dag.nodes.size(); ++i)
      if (dag.nodes[i].name == "pp send-grad L2 it0 mb1") {
        ++seen;
        EXPECT_DOUBLE_EQ(r.nodes[i].start_ns, 7100);
        EXPECT_DOUBLE_EQ(r.nodes[i].end_ns, 7200);
      }
    EXPECT_EQ(seen, 1);
  }
}

TEST(Pipeline, EachStageSynchronizesItsOwnGradientsOnceAfterTheLastMicrobatch) {
  // 2 data-parallel x 4 pipeline NPUs, ResNet-152's layers: each stage all-reduces its own
  // layers' gradients over dimension 0 once per iteration, all of them together the model's
  // FP16 gradients, after its last micro-batch's backward; the stage-to-stage transfers go
  // on dimension 1 only.
  const auto entry = workload::zoo_model("resnet152");
  net::Network n;
  n.name = "2x4";
  n.dims = {{net::DimKind::kSwitch, 2, 100, 1, 0}, {net::DimKind::kRing, 4, 100, 2, 0}};
  auto c = entry.parallelism;
  c.pp_stages = 4;
  c.microbatches = 3;
  c.iterations = 2;
  const auto dag = workload::build_training_dag(entry.model, c, n);
  EXPECT_EQ(dag.stages, 4);
  std::map<int, double> grad_bytes;  // per iteration
  for (const auto& node : dag.nodes) {
    if (node.kind != workload::NodeKind::kComm) continue;
    if (node.group == workload::CommGroup::kDataParallel) {
      EXPECT_EQ(node.dims, std::vector<int>{0}) << node.name;
      EXPECT_NE(node.name.find(" mb2"), std::string::npos) << node.name << ": not after the last micro-batch";
      grad_bytes[node.iteration] += node.bytes;
    } else {
      EXPECT_EQ(node.group, workload::CommGroup::kPipeline) << node.name;
      EXPECT_EQ(node.comm, workload::CommKind::kPointToPoint) << node.name;
      EXPECT_EQ(node.dims, std::vector<int>{1}) << node.name;
    }
  }
  ASSERT_EQ(grad_bytes.size(), 2u);
  for (const auto& [it, bytes] : grad_bytes)
    EXPECT_DOUBLE_EQ(bytes, 2 * entry.model.total_params()) << "iteration " << it;
  // Every stage computes a quarter-ish of the work; the run's split adds up per stage.
  const auto r = simulate(dag, n);
  for (const auto& st : r.stages) EXPECT_NEAR(st.compute_ns + st.exposed_comm_ns, r.total_ns, 1e-6 * r.total_ns);
}

TEST(Pipeline, OneStageWithMicrobatchesIsGradientAccumulation) {
  // One stage, 4 micro-batches of a 2-layer model on 2 data-parallel NPUs: per micro-batch
  // F = 2 x 1000 ns, B = 3000 (ig L1, wg L1, wg L0: the first layer has no input gradient),
  // back to back; each layer's gradient (100 B) is all-reduced once, after the last
  // micro-batch (50 ns reduce-scatter + 50 ns all-gather on the pair). L0's all-reduce starts
  // when the compute ends, at 4 x 5000, and ends 100 ns later.
  auto m = uniform_model(2, 4000, 0, false);
  m.layers[0].params = m.layers[1].params = 50;
  const auto dag = workload::build_training_dag(m, pipeline(1, 4, PipelineSchedule::kOneFOneB), line(2));
  int all_reduces = 0;
  for (const auto& node : dag.nodes) all_reduces += node.kind == workload::NodeKind::kComm;
  EXPECT_EQ(all_reduces, 2);
  const auto r = simulate(dag, line(2));
  EXPECT_DOUBLE_EQ(r.compute_ns, 20000);
  EXPECT_DOUBLE_EQ(r.total_ns, 20100);
  EXPECT_DOUBLE_EQ(r.exposed_dp_comm_ns, 100);
  EXPECT_TRUE(r.stages.empty());
}

TEST(Pipeline, BadCombinationsNameTheField) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");  // 16 x 8 x 8
  auto expect_error = [&](const std::string& model, workload::ParallelismConfig c, const std::string& what) {
    try {
      workload::build_training_dag(workload::zoo_model(model).model, c, net);
      ADD_FAILURE() << "no error for " << what;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  workload::ParallelismConfig c;
  c.pp_stages = 3;
  expect_error("resnet152", c, "pp_stages");  // not the NPUs of the last dimensions
  c.pp_stages = 8;
  expect_error("dlrm", c, "embedding tables");
  expect_error("moe", c, "expert");
  auto t = workload::zoo_model("transformer-1t").parallelism;  // model parallel over 16 x 8
  t.pp_stages = 64;                                            // 8 x 8: overlaps it
  expect_error("transformer-1t", t, "overlap");
  c.pp_stages = 1;
  c.microbatches = -1;
  expect_error("resnet152", c, "microbatches");
}

TEST(Pipeline, WorkloadYamlKeysAndErrors) {
  const std::string head = "batch_per_npu: 4\nparallelism:\n  pp_stages: 2\n";
  const std::string layers = "layers:\n  - {forward_flops: 1}\n  - {forward_flops: 1}\n";
  const auto e =
      workload::parse_workload_yaml(head + "  microbatches: 6\n  pipeline_schedule: gpipe\n" + layers, "p.yaml");
  EXPECT_EQ(e.parallelism.pp_stages, 2);
  EXPECT_EQ(e.parallelism.microbatches, 6);
  EXPECT_EQ(e.parallelism.pipeline_schedule, PipelineSchedule::kGPipe);
  EXPECT_EQ(workload::effective_microbatches(workload::parse_workload_yaml(head + layers, "p.yaml").parallelism), 8);
  for (const auto& [bad, needle] : {std::pair<std::string, std::string>{"  pipeline_schedule: zb\n", "p.yaml:4"},
                                    {"  microbatches: 0\n", "parallelism.microbatches"},
                                    {"  micro_batches: 2\n", "micro_batches"}}) {
    try {
      workload::parse_workload_yaml(head + bad + layers, "p.yaml");
      ADD_FAILURE() << "no error for " << bad;
    } catch (const InputError& err) {
      EXPECT_NE(std::string(err.what()).find(needle), std::string::npos) << err.what();
    }
  }
}

}  // namespace
}  // namespace chorus
