// Stragglers in the training-DAG simulator (sim/stragglers.h): which stage an NPU runs, the
// --speeds forms, and a data-parallel job slowed by one NPU. The pipeline's textbook stretch is in
// workload/test_pipeline.cpp (it reuses that file's hand timelines).
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "sim/dag_executor.h"
#include "sim/stragglers.h"
#include "workload/parallelism.h"
#include "workload/zoo.h"

namespace chorus {
namespace {

TEST(Stragglers, NpuStagesFollowTheGrayCode) {
  // 2 x 4 x 8 NPUs, 32 stages on dimensions 2 and 3 (4 x 8): stages 0-3 walk dimension 2 up
  // (coordinate 0..3) at dimension-3 coordinate 0, stages 4-7 walk it back down (3..0) at 1, ...
  // NPU = c1 + 2 c2 + 8 c3 (dimension 1 fastest); dimension 1 is not a pipeline dimension.
  net::Network n;
  n.dims = {{net::DimKind::kSwitch, 2, 100, 1, 0},
            {net::DimKind::kRing, 4, 100, 2, 0},
            {net::DimKind::kSwitch, 8, 100, 1, 0}};
  const auto stage = sim::npu_stages(n, 32);
  ASSERT_EQ(stage.size(), 64u);
  EXPECT_EQ(stage[0], 0);
  EXPECT_EQ(stage[1], 0);              // c1 = 1: the same stage
  EXPECT_EQ(stage[2 * 3], 3);          // c2 = 3, c3 = 0
  EXPECT_EQ(stage[2 * 3 + 8], 4);      // c2 = 3, c3 = 1: the walk turns
  EXPECT_EQ(stage[1 + 2 * 2 + 8], 5);  // c2 = 2, c3 = 1
  EXPECT_EQ(stage[8 * 2], 8);          // c2 = 0, c3 = 2: forward again
  EXPECT_EQ(stage[63], 28);            // c2 = 3, c3 = 7: stages 28-31 walk down, c2 = 3 first
  // Every stage has exactly 2 NPUs (dimension 1's).
  for (int s = 0; s < 32; ++s) EXPECT_EQ(std::count(stage.begin(), stage.end(), s), 2) << s;
  EXPECT_EQ(sim::npu_stages(n, 1), std::vector<int>(64, 0));
}

TEST(Stragglers, SpeedsAreAListOrASeededUniformDrawAndBadOnesAreInputErrors) {
  EXPECT_EQ(sim::parse_speeds("1,0.5,2", 3, "--speeds"), (std::vector<double>{1, 0.5, 2}));
  const auto drawn = sim::parse_speeds("uniform:0.5:1:7", 100, "--speeds");
  ASSERT_EQ(drawn.size(), 100u);
  EXPECT_GE(*std::min_element(drawn.begin(), drawn.end()), 0.5);
  EXPECT_LE(*std::max_element(drawn.begin(), drawn.end()), 1.0);
  EXPECT_EQ(drawn, sim::parse_speeds("uniform:0.5:1:7", 100, "--speeds"));
  EXPECT_EQ(drawn, sim::draw_speeds(100, 0.5, 1, 7));
  for (const char* bad : {"1,0", "1,x", "1", "1,1,1", "uniform:1:0.5:1", "uniform:0.5:1", "uniform:0.5:1:-1", "1,,1"})
    EXPECT_THROW(sim::parse_speeds(bad, 2, "--speeds"), InputError) << bad;
}

TEST(Stragglers, OneSlowNpuStretchesADataParallelIteration) {
  // ResNet-152, data-parallel on 8 NPUs of one switch; one NPU at speed 1/4. Every compute node
  // waits for it, so the iteration is at least 4 x the nominal compute (and the compute is exactly 4x).
  net::Network network;
  network.name = "sw8";
  network.dims = {{net::DimKind::kSwitch, 8, 100, 1, 0}};
  auto entry = workload::zoo_model("resnet152");
  entry.parallelism.iterations = 1;
  const auto dag = workload::build_training_dag(entry.model, entry.parallelism, network);
  sim::WorkloadSimOptions o;
  const auto nominal = sim::simulate_workload(dag, network, o).result;
  o.speeds.assign(network.num_npus(), 1.0);
  o.speeds[5] = 0.25;
  const auto slow = sim::simulate_workload(dag, network, o).result;
  EXPECT_GE(slow.total_ns, 4 * nominal.compute_ns);
  EXPECT_NEAR(slow.compute_ns, 4 * nominal.compute_ns, 1e-6 * nominal.compute_ns);
  o.speeds.pop_back();
  EXPECT_THROW(sim::simulate_workload(dag, network, o), InputError);
}

}  // namespace
}  // namespace chorus
