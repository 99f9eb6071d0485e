// `--topology host` for a capture: the backend's latency and bandwidth fitted from the window's
// all-reduces (capture/measured_channel.h), worked out by hand.
#include <gtest/gtest.h>

#include <string>

#include "capture/measured_channel.h"
#include "workload/capture/capture_manifest.h"

namespace chorus {
namespace {

using capture::LoggedAllReduce;

LoggedAllReduce op(double bytes, std::vector<std::int64_t> start, std::vector<std::int64_t> end) {
  return {bytes, std::move(start), std::move(end)};
}

TEST(CaptureMeasuredChannel, TwoRanksByHand) {
  // 2 ranks: an all-reduce is 2 steps of latency and sends the buffer once (2 (P-1)/P = 1).
  // d = the first end - the last start. Small ones (<= 1 KiB): 140 - 110 = 30, 20 - 0 = 20,
  // 100 - 50 = 50 ns, per step 15, 10, 25: latency 15 ns (the median). Large ones (>= 64 KiB),
  // less 2 x 15 ns: 100000 B in 20040 - 10 - 30 = 20000 ns, 40 Gb/s; 200000 B in 80035 - 5 - 30 =
  // 80000 ns, 20 Gb/s; 150000 B in 24030 - 30 = 24000 ns, 50 Gb/s: 40 Gb/s. 4096 B (neither) and
  // one whose first end precedes its last start do not count.
  const std::vector<LoggedAllReduce> ops = {
      op(4, {100, 110}, {140, 150}),      op(256, {0, 0}, {20, 40}),           op(1024, {50, 40}, {100, 120}),
      op(4096, {0, 0}, {900000, 900000}), op(100000, {0, 10}, {20040, 20100}), op(200000, {5, 0}, {80035, 90000}),
      op(150000, {0, 0}, {24030, 24031}), op(100000, {500, 0}, {400, 600}),    op(8, {0, 1000}, {900, 2000}),
  };
  const auto c = capture::fit_channel(ops, 2);
  EXPECT_DOUBLE_EQ(c.latency_ns, 15);
  EXPECT_EQ(c.latency_from, 3);
  EXPECT_DOUBLE_EQ(c.bandwidth_gbps, 40);
  EXPECT_EQ(c.bandwidth_from, 3);
}

TEST(CaptureMeasuredChannel, FourRanksAndWhatCannotBeMeasured) {
  // 4 ranks: 2 log2 4 = 4 steps, 2 x 3/4 = 1.5 buffers sent. d = 40 ns small: 10 ns a step;
  // 100000 B in 20040 ns: 1.5 x 800000 bits / (20040 - 40) ns = 60 Gb/s.
  auto c = capture::fit_channel(
      {op(64, {0, 5, 10, 0}, {50, 60, 70, 80}), op(100000, {0, 0, 0, 0}, {20040, 20040, 20050, 20060})}, 4);
  EXPECT_DOUBLE_EQ(c.latency_ns, 10);
  EXPECT_DOUBLE_EQ(c.bandwidth_gbps, 60);
  // No small all-reduce: the latency is not measured (0: the host model's stays) and the large
  // one's time is all bandwidth: 800000 bits in 20000 ns.
  c = capture::fit_channel({op(100000, {0, 0}, {20000, 20000})}, 2);
  EXPECT_EQ(c.latency_from, 0);
  EXPECT_DOUBLE_EQ(c.bandwidth_gbps, 40);
  // Nothing logged with times, one rank: nothing measured.
  c = capture::fit_channel({op(64, {}, {})}, 2);
  EXPECT_EQ(c.latency_from + c.bandwidth_from, 0);
  EXPECT_EQ(capture::fit_channel({op(64, {0}, {10})}, 1).latency_from, 0);
}

TEST(CaptureMeasuredChannel, AHandMadeLogWithoutTimesKeepsTheHostModel) {
  // tests/data/capture/dp4's logs have issue times only: the host model's shm channel (45 Gb/s,
  // 2 us; syndicate/topology.cpp) and its name.
  const auto m = workload::capture::read_manifest(std::string(CHORUS_TEST_DATA_DIR) + "/capture/dp4");
  const auto c = capture::measured_channel(m);
  EXPECT_EQ(c.latency_from + c.bandwidth_from, 0);
  const auto n = capture::capture_host_network(m, 4, "--topology", 8);
  EXPECT_EQ(n.name, "host (shm, 4 ranks)");
  EXPECT_DOUBLE_EQ(n.dims.front().latency_ns, 2000);
  EXPECT_DOUBLE_EQ(n.dims.front().link_bandwidth_gbps, 45);
}

}  // namespace
}  // namespace chorus
