// The Fig. 12 sensitivity study (eval/themis_sensitivity.h): the grid, the crossing's
// interpolation (by hand), and the study's limits derived without the study: a one-layer
// data-parallel workload whose iteration is its compute plus one all-reduce, timed by the
// collective simulator alone (`chorus sim collective`), at every compute rate; and a zoo model
// far into the compute-bound regime, where nothing is exposed.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "core/error.h"
#include "eval/themis_sensitivity.h"
#include "eval/themis_workloads.h"
#include "net/presets.h"
#include "sim/run_collective.h"

namespace chorus {
namespace {

using eval::SensitivityPoint;

TEST(Sensitivity, BatchesRunFromOneToTwiceTheZooBatchAtTheGivenStepsPerOctave) {
  EXPECT_EQ(eval::sensitivity_batches(32, 1), (std::vector<int>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(eval::sensitivity_batches(4, 2), (std::vector<int>{1, 2, 3, 4, 6, 8}));
  EXPECT_EQ(eval::sensitivity_batches(1, 1), (std::vector<int>{1, 2}));
  EXPECT_THROW(eval::sensitivity_batches(0, 1), InputError);
}

SensitivityPoint point(double value, double speedup, bool is_default = false) {
  return {"w", "batch", value, is_default, speedup, speedup, speedup, 0, 0};
}

TEST(Sensitivity, CrossingInterpolatesInLogValue) {
  // Given out of order. Between 2 (1.6x) and 4 (1.2x) the speedup falls by 0.4 per octave, so
  // 1.49x is 0.11 / 0.4 = 0.275 octaves above 2: 2^1.275.
  const auto c = eval::find_crossing({point(8, 1.0), point(2, 1.6), point(4, 1.2, true), point(1, 2.0)}, 1.49);
  ASSERT_TRUE(c && c->value);
  EXPECT_NEAR(*c->value, std::exp2(1.275), 1e-12);
  EXPECT_EQ(c->lo, 2);
  EXPECT_EQ(c->hi, 4);
  EXPECT_EQ(c->default_value, 4);
  EXPECT_EQ(c->default_speedup, 1.2);
  // On a grid point exactly.
  const auto on = eval::find_crossing({point(1, 1.3), point(2, 1.1, true)}, 1.3);
  ASSERT_TRUE(on && on->value);
  EXPECT_EQ(*on->value, 1);
  EXPECT_EQ(on->lo, 1);
  EXPECT_EQ(on->hi, 1);
  // Never reached.
  const auto never = eval::find_crossing({point(1, 1.1), point(2, 1.0, true)}, 1.49);
  ASSERT_TRUE(never);
  EXPECT_FALSE(never->value);
  // Two crossings (up at 1..2, down at 8..16): the one nearer the default, 16.
  const auto two =
      eval::find_crossing({point(1, 1.0), point(2, 2.0), point(8, 2.0), point(16, 1.0), point(32, 1.0, true)}, 1.5);
  ASSERT_TRUE(two && two->value);
  EXPECT_NEAR(*two->value, std::sqrt(8.0 * 16.0), 1e-9);  // half way in log
}

// A one-layer data-parallel ASTRA-sim text workload: forward F, input gradient I, weight
// gradient W cycles, then an all-reduce of S bytes over every dimension, then the update U.
constexpr double kF = 3000, kI = 2000, kW = 1000, kU = 500, kS = 64 << 20;

std::string one_layer_file() {
  const std::string path = testing::TempDir() + "/sensitivity_one_layer.txt";
  std::ofstream(path) << "DATA\n1\nlayer0 -1 " << kF << " NONE 0 " << kI << " NONE 0 " << kW << " ALLREDUCE "
                      << static_cast<long>(kS) << " " << kU << "\n";
  return path;
}

TEST(Sensitivity, OneLayerSpeedupFromTheCollectiveAloneAtEveryRate) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");
  // The all-reduce on its own (sim collective), 64 chunks, each scheduler.
  const double base =
      sim::run_collective(net, sim::make_request(CollectiveKind::kAllReduce, kS, 64, "baseline")).result.time_ns;
  const double scf =
      sim::run_collective(net, sim::make_request(CollectiveKind::kAllReduce, kS, 64, "themis-scf")).result.time_ns;
  ASSERT_GT(base, scf);  // Themis's gain on this collective, the communication-bound limit
  eval::SensitivityConfig c;
  c.topologies = {net};
  c.astra_file = one_layer_file();
  // From communication-bound (1e9: compute ~1e-6 ns) to compute-bound (1e-4: 3e7 ns forward).
  c.compute_rates = {1e9, 10, 1, 0.01, 1e-4};
  c.iterations = 3;
  const auto study = eval::run_themis_sensitivity(c);
  ASSERT_EQ(study.points.size(), c.compute_rates.size());
  for (std::size_t i = 0; i < c.compute_rates.size(); ++i) {
    const double r = c.compute_rates[i];
    // An iteration: forward, weight gradient, then the all-reduce while the stream runs the
    // input gradient, then the update, which the next forward waits for (1 ns per cycle / r).
    const auto iteration = [&](double ar) { return (kF + kW + kU) / r + std::max(ar, kI / r); };
    const auto& p = study.points[i];
    EXPECT_EQ(p.workload, eval::kAstraResNet50);
    EXPECT_EQ(p.value, r);
    EXPECT_NEAR(p.mean_speedup, iteration(base) / iteration(scf), 1e-9) << "rate " << r;
  }
  EXPECT_NEAR(study.points.front().mean_speedup, base / scf, 1e-9);  // communication-bound: the collective's
  EXPECT_NEAR(study.points.back().mean_speedup, 1.0, 1e-3);          // compute-bound: 1
  // The paper's 1.49x (ResNet-152's) is reached between rates where the speedup straddles it.
  ASSERT_EQ(study.crossings.size(), 1u);
  if (base / scf > 1.49) {
    ASSERT_TRUE(study.crossings[0].value);
    EXPECT_EQ(study.crossings[0].paper_speedup, 1.49);
  }
}

TEST(Sensitivity, ZooModelComputeBoundGivesNoSpeedup) {
  // ResNet-152 at the A100 roofline / 10^4: its compute (several ms per iteration at rate 1)
  // is tens of seconds; the gradients (120 MB) take milliseconds, so at most a 10^-3 share of
  // the iteration can be exposed communication, whatever the scheduler.
  eval::SensitivityConfig c;
  c.workloads = {"resnet152"};
  c.topologies = {*net::find_preset("3D-SW_SW_SW_homo")};
  c.compute_rates = {1e-4};
  c.iterations = 1;
  const auto study = eval::run_themis_sensitivity(c);
  bool seen = false;
  for (const auto& p : study.points)
    if (p.axis == "compute") {
      seen = true;
      EXPECT_NEAR(p.mean_speedup, 1.0, 1e-3);
      EXPECT_GT(p.baseline_compute_ns, 1e9);
    }
  EXPECT_TRUE(seen);
}

TEST(Sensitivity, DefaultPointIsTheFig12Run) {
  // The sensitivity study's (zoo batch, rate 1) point is the Fig. 12 study's run.
  eval::SensitivityConfig c;
  c.workloads = {"dlrm"};
  c.topologies = {*net::find_preset("2D-SW_SW")};
  c.compute_rates = {1};
  c.iterations = 1;
  const auto study = eval::run_themis_sensitivity(c);
  auto fig12 = eval::WorkloadStudyConfig::paper_defaults();
  fig12.workloads = c.workloads;
  fig12.topologies = c.topologies;
  fig12.schedulers = {"baseline", "themis-scf"};
  fig12.iterations = 1;
  const auto w = eval::run_themis_workloads(fig12);
  ASSERT_EQ(w.summary.size(), 1u);
  int defaults = 0;
  for (const auto& p : study.points)
    if (p.is_default) {
      ++defaults;
      EXPECT_DOUBLE_EQ(p.mean_speedup, w.summary[0].mean_speedup) << p.axis;
    }
  EXPECT_EQ(defaults, 2);  // batch 512 and rate 1
}

TEST(Sensitivity, MissingFileZeroRateAndUnknownWorkloadAreInputErrors) {
  eval::SensitivityConfig c;
  c.topologies = {*net::find_preset("2D-SW_SW")};
  c.compute_rates = {1};
  c.astra_file = testing::TempDir() + "/no_such_workload.txt";
  EXPECT_THROW(eval::run_themis_sensitivity(c), InputError);
  c.astra_file.clear();
  c.compute_rates = {0};
  EXPECT_THROW(eval::run_themis_sensitivity(c), InputError);
  c.compute_rates = {1};
  c.workloads = {"resnet125"};
  EXPECT_THROW(eval::run_themis_sensitivity(c), InputError);
}

}  // namespace
}  // namespace chorus
