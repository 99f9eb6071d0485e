// Issue 34, item 4 on multi-dimensional networks: a dimension at a fraction of its bandwidth, and
// Themis on stale bandwidths (planned on the nominal network, run on the degraded one). Every
// expected time below is derived by hand from docs/themis-model.md: a stage costs
// A_K + n_K x B_K, a dimension serves one chunk's bandwidth phase at a time.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/error.h"
#include "net/degraded.h"
#include "net/presets.h"
#include "sim/run_collective.h"

namespace chorus {
namespace {

// Two switch dimensions of two NPUs, one 8 Gb/s link each (1 byte/ns).
net::Network two_by_two(double latency_ns) {
  return net::Network{"2x2",
                      {net::Dimension{net::DimKind::kSwitch, 2, 8, 1, latency_ns},
                       net::Dimension{net::DimKind::kSwitch, 2, 8, 1, latency_ns}}};
}

std::string degrade_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// One chunk of 1000 bytes, 100 ns step latency. RS dim 0 (m = 1000): 100 + 500; RS dim 1
// (m = 500): 100 + 250; AG dim 1 (m = 250): 100 + 250; AG dim 0 (m = 500): 100 + 500: 1900 ns.
// Dimension 1 at half bandwidth, its only path: each of its two bandwidth terms doubles to
// 500 ns, 2400 ns in all; its busy time (the bandwidth terms) doubles from 500 to 1000 ns, and
// dimension 0's stays 1000 ns.
TEST(DegradedDimension, HalfBandwidthDoublesTheDimensionsTransferTime) {
  const auto nominal = two_by_two(100);
  const auto half = net::degrade(nominal, {{1, 0.5}}, "--degrade");
  EXPECT_DOUBLE_EQ(half.dims[1].link_bandwidth_gbps, 4);
  EXPECT_DOUBLE_EQ(half.dims[1].latency_ns, 100);
  EXPECT_DOUBLE_EQ(half.dims[0].link_bandwidth_gbps, 8);
  const auto req = sim::make_request(CollectiveKind::kAllReduce, 1000, 1, "baseline");
  const auto a = sim::run_collective(nominal, req).result;
  const auto b = sim::run_collective(half, req).result;
  EXPECT_DOUBLE_EQ(a.time_ns, 1900);
  EXPECT_DOUBLE_EQ(b.time_ns, 2400);
  EXPECT_DOUBLE_EQ(a.dims[1].busy_ns, 500);
  EXPECT_DOUBLE_EQ(b.dims[1].busy_ns, 1000);
  EXPECT_DOUBLE_EQ(b.dims[0].busy_ns, 1000);
  EXPECT_DOUBLE_EQ(b.dims[1].bytes_per_npu, 500);  // the same bytes, sent slower
}

// Two chunks of 1000 bytes (S = 2000), no latency, dimension 1 at a quarter (0.25 byte/ns).
// Themis (Algorithm 1; the threshold is 1000/16's RS load on the least-loaded dimension,
// 31.25 ns, far below every load gap here):
//  - planned on the nominal bandwidths: chunk 0 sees loads (0, 0), equal: baseline RS 0,1, which
//    adds (500, 250); chunk 1 sees dimension 1 less loaded: RS 1,0 (AG 0,1);
//  - re-planned on the degraded ones: chunk 0 baseline again, which adds (500, 1000); chunk 1
//    sees dimension 0 less loaded: RS 0,1, the baseline's order.
// Run on the degraded network under FIFO, stage by stage (dimension 0 takes 500 ns for m = 1000,
// 250 ns for 500 or 250 sent; dimension 1 takes 4 ns per byte sent):
//  - re-planned (= baseline): dim 0 runs chunk 0 RS 0-500, chunk 1 RS 500-1000; dim 1 runs
//    chunk 0 RS 500-1500, chunk 1 RS 1500-2500, chunk 0 AG 2500-3500, chunk 1 AG 3500-4500; chunk 1
//    AG on dim 0 4500-5000: 5000 ns;
//  - stale: dim 1 runs chunk 1 RS (500 bytes) 0-2000, chunk 0 RS 2000-3000; chunk 1 meanwhile RS
//    and AG on dim 0 (2000-2500) and waits for dim 1 from 2500, first in line: its AG (500 bytes)
//    3000-5000, then chunk 0's AG 5000-6000 and AG on dim 0 6000-6500: 6500 ns, 30 % lost.
TEST(DegradedDimension, ThemisPlannedOnStaleBandwidthsLosesAndReplanningRecoversIt) {
  const auto nominal = two_by_two(0);
  const auto quarter = net::degrade(nominal, {{1, 0.25}}, "--degrade");
  const auto themis = sim::make_request(CollectiveKind::kAllReduce, 2000, 2, "themis-fifo");
  const auto stale = sim::run_collective_planned_on(nominal, quarter, themis);
  const auto replanned = sim::run_collective(quarter, themis);
  const auto baseline =
      sim::run_collective(quarter, sim::make_request(CollectiveKind::kAllReduce, 2000, 2, "baseline"));
  ASSERT_EQ(stale.schedule.chunks.size(), 2u);
  EXPECT_EQ(stale.schedule.chunks[1].order(coll::Phase::kReduceScatter), (std::vector<int>{1, 0}));
  EXPECT_EQ(replanned.schedule.chunks[1].order(coll::Phase::kReduceScatter), (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(stale.result.time_ns, 6500);
  EXPECT_DOUBLE_EQ(replanned.result.time_ns, 5000);
  EXPECT_DOUBLE_EQ(baseline.result.time_ns, 5000);
  // Planned on the network it runs on, run_collective_planned_on is run_collective.
  EXPECT_DOUBLE_EQ(sim::run_collective_planned_on(quarter, quarter, themis).result.time_ns, 5000);
}

TEST(DegradedDimension, BadSpecificationsNameTheField) {
  const auto n = two_by_two(0);
  EXPECT_NE(degrade_error_of([] { net::parse_dim_degradation("1", "--degrade"); }).find("--degrade"),
            std::string::npos);
  EXPECT_NE(degrade_error_of([] { net::parse_dim_degradation("x:0.5", "--degrade"); }).find("integer"),
            std::string::npos);
  EXPECT_NE(degrade_error_of([] { net::parse_dim_degradation("1:0", "--degrade"); }).find("(0, 1]"), std::string::npos);
  EXPECT_NE(degrade_error_of([] { net::parse_dim_degradation("1:1.5", "--degrade"); }).find("(0, 1]"),
            std::string::npos);
  EXPECT_NE(degrade_error_of([] { net::parse_dim_degradation("1:0.5:2", "--degrade"); }).find("two fields"),
            std::string::npos);
  const auto ok = net::parse_dim_degradation("1:0.5", "--degrade");
  EXPECT_EQ(ok.dim, 1);
  EXPECT_DOUBLE_EQ(ok.fraction, 0.5);
  EXPECT_NE(degrade_error_of([&] {
              net::degrade(n, {{2, 0.5}}, "--degrade");
            }).find("dimensions 0..1"),
            std::string::npos);
  // A plan for another shape of network cannot run.
  const auto other = *net::find_preset("2D-SW_SW");
  EXPECT_NE(degrade_error_of([&] {
              sim::run_collective_planned_on(other, n,
                                             sim::make_request(CollectiveKind::kAllReduce, 2000, 2, "baseline"));
            }).find("the dimensions must be the same"),
            std::string::npos);
}

}  // namespace
}  // namespace chorus
