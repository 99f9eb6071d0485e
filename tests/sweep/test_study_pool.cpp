// `chorus reproduce`'s studies on a pool of workers: the rows of several workers equal those of 1
// (run under ThreadSanitizer too), the progress hears of every run once.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "eval/study_runs.h"
#include "eval/themis_degraded.h"
#include "eval/themis_microbench.h"
#include "eval/themis_workloads.h"
#include "eval/topoopt_iterations.h"
#include "net/presets.h"
#include "sim/run_collective.h"

namespace chorus::eval {
namespace {

IterationStudyOptions small(int workers) {
  IterationStudyOptions o;
  o.models = {"topoopt-dlrm", "topoopt-bert"};
  o.fabrics = {"ideal-fat-tree", "expander", "topoopt-oneshot"};
  o.servers = 16;
  o.degrees = {4};
  o.bandwidths = {25, 100};
  o.iterations = 1;
  o.reconfig_models = {"topoopt-dlrm"};
  o.reconfig_latencies_us = {10, 1000};
  o.workers = workers;
  return o;
}

void expect_same(const IterationRow& a, const IterationRow& b) {
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.fabric, b.fabric);
  EXPECT_EQ(a.degree, b.degree);
  EXPECT_EQ(a.bandwidth_gbps, b.bandwidth_gbps);
  EXPECT_EQ(a.iteration_ns, b.iteration_ns);
  EXPECT_EQ(a.exposed_dp_ns, b.exposed_dp_ns);
  EXPECT_EQ(a.flows, b.flows);
  EXPECT_EQ(a.reconfig_latency_us, b.reconfig_latency_us);
  EXPECT_EQ(a.reconfigurations, b.reconfigurations);
}

TEST(StudyPool, TopoOptIterationsOnThreeWorkersEqualOne) {
  const auto serial = run_iteration_study(small(1));
  auto o = small(3);
  std::set<int> dones;
  double last_left = -1;
  o.progress = [&](const IterationRow&, int done, int total, double left_s) {
    EXPECT_EQ(total, 2 * 1 * 2 * 3 + 1 * 3);  // models x degrees x bandwidths x fabrics + Fig. 15's runs
    dones.insert(done);
    if (done == total) last_left = left_s;
  };
  const auto parallel = run_iteration_study(o);
  EXPECT_EQ(dones.size(), 15u);
  EXPECT_EQ(last_left, 0);  // nothing left after the last run
  ASSERT_EQ(serial.rows.size(), 12u);
  ASSERT_EQ(parallel.rows.size(), serial.rows.size());
  for (std::size_t i = 0; i < serial.rows.size(); ++i) expect_same(serial.rows[i], parallel.rows[i]);
  ASSERT_EQ(parallel.reconfig_rows.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) expect_same(serial.reconfig_rows[i], parallel.reconfig_rows[i]);
  EXPECT_EQ(serial.reconfig_rows[1].reconfig_latency_us, 10);
  ASSERT_EQ(parallel.ratios.size(), serial.ratios.size());
  for (std::size_t i = 0; i < serial.ratios.size(); ++i)
    EXPECT_EQ(serial.ratios[i].mean_over_topoopt, parallel.ratios[i].mean_over_topoopt);
}

// A small microbenchmark study: 2 topologies x 2 sizes x 3 schedulers, a chunk sweep of 2 x 3 and
// 3 activity runs, on 1 and on 2 workers.
MicrobenchConfig small_microbench(int workers) {
  auto c = MicrobenchConfig::paper_defaults();
  c.topologies = {*net::find_preset("2D-SW_SW"), *net::find_preset("3D-SW_SW_SW_homo")};
  c.sizes_bytes = {1e6, 64e6};
  c.schedulers = {"baseline", "themis-scf", "ideal"};
  c.sweep_chunks = {4, 16};
  c.sweep_topologies = {"4D-Ring_FC_Ring_SW"};
  c.sweep_size_bytes = 8e6;
  c.activity_size_bytes = 8e6;
  c.workers = workers;
  return c;
}

TEST(StudyPool, ThemisMicrobenchOnTwoWorkersEqualsOne) {
  const auto serial = run_themis_microbench(small_microbench(1));
  std::set<int> dones;
  std::string last_label;
  const auto parallel = run_themis_microbench(small_microbench(2), [&](int done, int total, const std::string& label) {
    EXPECT_EQ(total, 2 * 2 * 3 + 2 * 3 + 3);
    dones.insert(done);
    if (done == total) last_label = label;
  });
  EXPECT_EQ(dones, (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}));
  EXPECT_EQ(last_label.find("left"), std::string::npos);  // nothing left after the last run
  ASSERT_EQ(serial.rows.size(), 18u);
  ASSERT_EQ(parallel.rows.size(), serial.rows.size());
  for (std::size_t i = 0; i < serial.rows.size(); ++i) {
    EXPECT_EQ(parallel.rows[i].study, serial.rows[i].study);
    EXPECT_EQ(parallel.rows[i].topology, serial.rows[i].topology);
    EXPECT_EQ(parallel.rows[i].size_bytes, serial.rows[i].size_bytes);
    EXPECT_EQ(parallel.rows[i].scheduler, serial.rows[i].scheduler);
    EXPECT_EQ(parallel.rows[i].chunks, serial.rows[i].chunks);
    EXPECT_EQ(parallel.rows[i].time_ns, serial.rows[i].time_ns);
    EXPECT_EQ(parallel.rows[i].avg_bw_utilization, serial.rows[i].avg_bw_utilization);
  }
  // The serial order: topology, then size, then scheduler (the sizes study first).
  EXPECT_EQ(serial.rows[0].topology, "2D-SW_SW");
  EXPECT_EQ(serial.rows[1].scheduler, "themis-scf");
  EXPECT_EQ(serial.rows[3].size_bytes, 64e6);
  EXPECT_EQ(serial.rows[12].study, "chunk_sweep");
  ASSERT_EQ(parallel.activity.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(parallel.activity[i].scheduler, serial.activity[i].scheduler);
    EXPECT_EQ(parallel.activity[i].rate_per_dim, serial.activity[i].rate_per_dim);
  }
  ASSERT_EQ(parallel.summary.size(), serial.summary.size());
  for (std::size_t i = 0; i < serial.summary.size(); ++i)
    EXPECT_EQ(parallel.summary[i].mean_speedup_over_baseline, serial.summary[i].mean_speedup_over_baseline);
}

TEST(StudyPool, ThemisWorkloadsOnTwoWorkersEqualOne) {
  auto c = WorkloadStudyConfig::paper_defaults();
  c.workloads = {"resnet152"};
  c.topologies = {*net::find_preset("2D-SW_SW"), *net::find_preset("4D-Ring_FC_Ring_SW")};
  c.schedulers = {"baseline", "themis-scf"};
  c.iterations = 1;
  const auto serial = run_themis_workloads(c);
  c.workers = 2;
  const auto parallel = run_themis_workloads(c);
  ASSERT_EQ(serial.rows.size(), 4u);
  ASSERT_EQ(parallel.rows.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(parallel.rows[i].topology, serial.rows[i].topology);
    EXPECT_EQ(parallel.rows[i].scheduler, serial.rows[i].scheduler);
    EXPECT_EQ(parallel.rows[i].iteration_time_ns, serial.rows[i].iteration_time_ns);
    EXPECT_EQ(parallel.rows[i].exposed_comm_ns, serial.rows[i].exposed_comm_ns);
  }
  EXPECT_EQ(serial.rows[1].topology, "2D-SW_SW");
  EXPECT_EQ(serial.rows[1].scheduler, "themis-scf");
}

TEST(StudyPool, ThemisDegradedOnTwoWorkersEqualsOne) {
  DegradedConfig c;
  c.size_bytes = 8e6;
  c.chunks = 8;
  c.fractions = {0.5};
  const auto serial = run_themis_degraded(c);
  c.workers = 2;
  const auto parallel = run_themis_degraded(c);
  int dims = 0;
  for (const auto& n : net::table2_presets()) dims += n.num_dims();
  ASSERT_EQ(serial.rows.size(), static_cast<std::size_t>(dims));
  ASSERT_EQ(parallel.rows.size(), serial.rows.size());
  for (std::size_t i = 0; i < serial.rows.size(); ++i) {
    EXPECT_EQ(parallel.rows[i].topology, serial.rows[i].topology);
    EXPECT_EQ(parallel.rows[i].dim, serial.rows[i].dim);
    EXPECT_EQ(parallel.rows[i].healthy_themis_ns, serial.rows[i].healthy_themis_ns);
    EXPECT_EQ(parallel.rows[i].stale_ns, serial.rows[i].stale_ns);
    EXPECT_EQ(parallel.rows[i].replanned_ns, serial.rows[i].replanned_ns);
    // Re-planned on the degraded bandwidths, Themis is never slower than the ideal bound allows.
    EXPECT_GE(serial.rows[i].replanned_ns, serial.rows[i].ideal_ns * (1 - 1e-9));
  }
  // Each topology's healthy time is that of its own undegraded run.
  const auto presets = net::table2_presets();
  const auto healthy =
      sim::run_collective(presets.front(), sim::make_request(CollectiveKind::kAllReduce, 8e6, 8, "themis-scf"))
          .result.time_ns;
  EXPECT_EQ(serial.rows[0].healthy_themis_ns, healthy);
}

TEST(StudyPool, RunsAreTakenSpreadOverTheStudy) {
  // 10 runs: a step of round(10 x 0.618) = 6 shares 2 with 10, so 7: 0, 7, 4, 1, 8, 5, 2, 9, 6, 3.
  EXPECT_EQ(spread_order(10), (std::vector<std::size_t>{0, 7, 4, 1, 8, 5, 2, 9, 6, 3}));
  EXPECT_EQ(spread_order(1), std::vector<std::size_t>{0});
  EXPECT_TRUE(spread_order(0).empty());
  for (std::size_t n : {2u, 3u, 55u, 96u, 100u}) {
    auto order = spread_order(n);
    std::sort(order.begin(), order.end());
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(order[i], i) << n;  // each index once
  }
}

TEST(StudyPool, ARunInFlightIsExpectedToTakeWhatItsPredictionLeaves) {
  EXPECT_DOUBLE_EQ(expected_remaining_s({10, 3}), 7);  // 10 s predicted, 3 s run: 7 s to go
  EXPECT_DOUBLE_EQ(expected_remaining_s({10, 0}), 10);
  // At or past its prediction the prediction was wrong: as long again as it has run so far.
  EXPECT_DOUBLE_EQ(expected_remaining_s({10, 10}), 10);
  EXPECT_DOUBLE_EQ(expected_remaining_s({1, 30}), 30);
  EXPECT_DOUBLE_EQ(expected_remaining_s({0, 0}), 0);
}

TEST(StudyPool, TimeLeftIsNeverLessThanARunInFlightStillTakes) {
  // Queued 2 s and 4 s, in flight 10 s predicted and 3 s run (7 s to go), 2 workers: shared,
  // (2 + 4 + 7) / 2 = 6.5 s, but the run in flight alone takes 7 s more.
  EXPECT_DOUBLE_EQ(time_left_s({2, 4}, {{10, 3}}, 2), 7);
  // Queued 3 s four times, in flight 5 s predicted and 1 s run (4 to go), 2 workers: the share
  // (12 + 4) / 2 = 8 s is the larger.
  EXPECT_DOUBLE_EQ(time_left_s({3, 3, 3, 3}, {{5, 1}}, 2), 8);
  // Only a run that was predicted at 1 s and has run 30 s is left, on 4 workers: the sum over the
  // workers (the old estimate) would give 1 / 4 s; it is taken to be halfway, 30 s.
  EXPECT_DOUBLE_EQ(time_left_s({}, {{1, 30}}, 4), 30);
  // Nothing in flight: the queued runs shared, but not less than the largest (9 s) alone.
  EXPECT_DOUBLE_EQ(time_left_s({1, 2, 9}, {}, 3), 9);
  EXPECT_DOUBLE_EQ(time_left_s({6, 6, 6}, {}, 2), 9);
  EXPECT_DOUBLE_EQ(time_left_s({6, 6, 6}, {}, 0), 18);  // workers < 1 count as 1
  EXPECT_DOUBLE_EQ(time_left_s({}, {}, 2), 0);
  EXPECT_EQ(with_time_left("a", time_left_s({}, {{1, 30}}, 4)), "a; about 30 s left");
}

TEST(StudyPool, TimeLeftFromTheRunsOwnCosts) {
  EXPECT_EQ(with_time_left("a", 0), "a");
  EXPECT_EQ(with_time_left("a", 2.2), "a; about 3 s left");
  // Runs of two kinds on one worker: once one of each is done, the label of the last but one
  // run predicts the last one from its kind's own cost.
  std::vector<StudyRun> runs = {{{{"kind", "x"}}, "x0"}, {{{"kind", "y"}}, "y0"}, {{{"kind", "x"}}, "x1"}};
  std::vector<std::string> labels;
  run_study(
      runs, 1, [](std::size_t) {}, [&](int, int, const std::string& label) { labels.push_back(label); });
  ASSERT_EQ(labels.size(), 4u);  // before the first run, then after each: order 0, 2, 1
  EXPECT_EQ(labels[0], "x0");
  EXPECT_EQ(labels[3], "y0");  // nothing left
}

}  // namespace
}  // namespace chorus::eval
