// Per-dimension collective costs against hand-worked values (Themis Sec. 2-4, Table 1).
#include <gtest/gtest.h>

#include "coll/stage_cost.h"
#include "sched/ideal.h"
#include "net/presets.h"

namespace chorus::coll {
namespace {

net::Dimension dim(net::DimKind kind, int size, double gbps, double latency_ns) {
  return net::Dimension{kind, size, gbps, 1, latency_ns};
}

TEST(StageCost, RingFootnote7) {
  // Themis footnote 7: a 4 MB chunk on a ring RS/AG sends (P-1)/P x 4 MB.
  const auto c = ring_cost(Phase::kReduceScatter, 4, 4e6);
  EXPECT_EQ(c.steps, 3);
  EXPECT_DOUBLE_EQ(c.bytes_sent, 3e6);
  // All-gather from a 1 MB resident block sends (P-1) x 1 MB and leaves 4 MB.
  const auto g = ring_cost(Phase::kAllGather, 4, 1e6);
  EXPECT_EQ(g.steps, 3);
  EXPECT_DOUBLE_EQ(g.bytes_sent, 3e6);
  // All-to-all on a bidirectional ring of 4: blocks travel 1, 2, 1 hops.
  const auto a = ring_cost(Phase::kAllToAll, 4, 4e6);
  EXPECT_EQ(a.steps, 2);
  EXPECT_DOUBLE_EQ(a.bytes_sent, 4e6);
}

TEST(StageCost, HalvingDoublingDirectAndPairwiseStepsAndBytesByHand) {
  const auto hd = halving_doubling_cost(Phase::kReduceScatter, 16, 16e6);
  EXPECT_EQ(hd.steps, 4);
  EXPECT_DOUBLE_EQ(hd.bytes_sent, 15e6);
  const auto hg = halving_doubling_cost(Phase::kAllGather, 8, 1e6);
  EXPECT_EQ(hg.steps, 3);
  EXPECT_DOUBLE_EQ(hg.bytes_sent, 7e6);
  const auto d = direct_cost(Phase::kReduceScatter, 8, 8e6);
  EXPECT_EQ(d.steps, 1);
  EXPECT_DOUBLE_EQ(d.bytes_sent, 7e6);
  const auto p = pairwise_all_to_all_cost(8, 8e6);
  EXPECT_EQ(p.steps, 7);
  EXPECT_DOUBLE_EQ(p.bytes_sent, 7e6);
}

TEST(StageCost, TimeIsFixedDelayPlusBytesOverBandwidth) {
  // Sec. 4.4: A_K + n_K B_K. Switch of 16 at 800 Gb/s (100 B/ns), 700 ns steps.
  const auto sw = dim(net::DimKind::kSwitch, 16, 800, 700);
  EXPECT_DOUBLE_EQ(fixed_delay_ns(sw, Phase::kReduceScatter), 4 * 700.0);
  EXPECT_DOUBLE_EQ(bandwidth_time_ns(sw, Phase::kReduceScatter, 16e6), 15e6 / 100.0);
  EXPECT_DOUBLE_EQ(stage_time_ns(sw, Phase::kReduceScatter, 16e6), 2800.0 + 150000.0);
  // A ring all-reduce needs 2P-2 steps (Sec. 4.4): RS + AG stages of P-1 each.
  const auto ring = dim(net::DimKind::kRing, 6, 100, 10);
  EXPECT_EQ(stage_cost(ring, Phase::kReduceScatter, 1).steps + stage_cost(ring, Phase::kAllGather, 1).steps, 10);
  EXPECT_EQ(algorithm_name(sw, Phase::kReduceScatter), "halving_doubling");
  EXPECT_EQ(algorithm_name(ring, Phase::kAllGather), "ring");
  EXPECT_EQ(algorithm_name(dim(net::DimKind::kFullyConnected, 4, 1, 1), Phase::kAllGather), "direct");
}

TEST(StageCost, ResidentSizeConvention) {
  // Sec. 2.3: RS divides, AG multiplies by the dimension size.
  EXPECT_DOUBLE_EQ(resident_after(Phase::kReduceScatter, 64e6, 4), 16e6);
  EXPECT_DOUBLE_EQ(resident_after(Phase::kAllGather, 16e6, 4), 64e6);
  EXPECT_DOUBLE_EQ(initial_resident_bytes(CollectiveKind::kAllGather, 1024, 16), 64);
}

TEST(Ideal, MinimumBytesOverTotalBandwidth) {
  const auto n = *net::find_preset("3D-SW_SW_SW_homo");  // 2400 Gb/s in total = 300 B/ns
  const double s = 1e9;
  EXPECT_DOUBLE_EQ(sched::ideal_bytes_per_npu(n, CollectiveKind::kAllReduce, s), 2 * 1023.0 / 1024 * s);
  EXPECT_DOUBLE_EQ(sched::ideal_time_ns(n, CollectiveKind::kAllReduce, s), 2 * 1023.0 / 1024 * s / 300.0);
  EXPECT_DOUBLE_EQ(sched::ideal_time_ns(n, CollectiveKind::kReduceScatter, s), 1023.0 / 1024 * s / 300.0);
}

}  // namespace
}  // namespace chorus::coll
