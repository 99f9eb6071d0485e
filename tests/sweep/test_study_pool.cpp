// `chorus reproduce topoopt`'s iteration study on a pool of workers: the rows and ratios of 3
// workers equal those of 1 (run under ThreadSanitizer too), the progress hears of every run once.
#include <gtest/gtest.h>

#include <set>

#include "eval/topoopt_iterations.h"

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

}  // namespace
}  // namespace chorus::eval
