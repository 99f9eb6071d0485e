// `--dim-backends auto`: the group operations each dimension runs, the tuning table's estimate
// of a backend at a size, and the choice per dimension; every expected value worked out by hand
// in the comments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "rt/schedule/dim_backends.h"

namespace chorus::rt {
namespace {

using coll::Phase;

// An all-reduce of 1200 bytes in 2 chunks (600 bytes each) on a 2 x 3 grid: chunk 0 reduces
// over dimension 1 then 2, chunk 1 over 2 then 1; all-gathers in the reverse order.
sched::Schedule two_chunk_allreduce() {
  sched::Schedule s;
  s.op = CollectiveKind::kAllReduce;
  s.size_bytes = 1200;
  s.num_chunks = 2;
  s.chunks = {
      {{{Phase::kReduceScatter, 0}, {Phase::kReduceScatter, 1}, {Phase::kAllGather, 1}, {Phase::kAllGather, 0}}},
      {{{Phase::kReduceScatter, 1}, {Phase::kReduceScatter, 0}, {Phase::kAllGather, 0}, {Phase::kAllGather, 1}}}};
  return s;
}

TuningRow row(std::uint64_t bytes, double shm, double gloo) {
  TuningRow r;
  r.bytes = bytes;
  r.time_us = {{"shm", shm}, {"gloo", gloo}};
  return r;
}

TEST(DimBackends, CallsFollowTheHierarchicalCuts) {
  // Chunk 0: RS on d1 of 600 B (keeps 300), RS on d2 of 300 B (keeps 100), AG on d2 back to
  // 300 B, AG on d1 back to 600 B. Chunk 1: RS d2 600 (keeps 200), RS d1 200, AG d1 200, AG d2 600.
  const auto calls = dim_calls(two_chunk_allreduce(), {2, 3});
  ASSERT_EQ(calls.size(), 2u);
  const std::vector<std::pair<CollectiveKind, double>> d1 = {{CollectiveKind::kReduceScatter, 600},
                                                             {CollectiveKind::kAllGather, 600},
                                                             {CollectiveKind::kReduceScatter, 200},
                                                             {CollectiveKind::kAllGather, 200}};
  const std::vector<std::pair<CollectiveKind, double>> d2 = {{CollectiveKind::kReduceScatter, 300},
                                                             {CollectiveKind::kAllGather, 300},
                                                             {CollectiveKind::kReduceScatter, 600},
                                                             {CollectiveKind::kAllGather, 600}};
  ASSERT_EQ(calls[0].size(), 4u);
  ASSERT_EQ(calls[1].size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(calls[0][i].op, d1[i].first) << i;
    EXPECT_DOUBLE_EQ(calls[0][i].bytes, d1[i].second) << i;
    EXPECT_EQ(calls[1][i].op, d2[i].first) << i;
    EXPECT_DOUBLE_EQ(calls[1][i].bytes, d2[i].second) << i;
  }
}

TEST(DimBackends, AllGatherChunksStartAsOnePiece) {
  // An all-gather of 1200 B in one chunk on 2 x 3: the chunk starts as 1200 / 6 = 200 B, the
  // stage on d2 outputs 600 B, the one on d1 1200 B.
  sched::Schedule s;
  s.op = CollectiveKind::kAllGather;
  s.size_bytes = 1200;
  s.num_chunks = 1;
  s.chunks = {{{{Phase::kAllGather, 1}, {Phase::kAllGather, 0}}}};
  const auto calls = dim_calls(s, {2, 3});
  ASSERT_EQ(calls[1].size(), 1u);
  EXPECT_DOUBLE_EQ(calls[1][0].bytes, 600);
  ASSERT_EQ(calls[0].size(), 1u);
  EXPECT_DOUBLE_EQ(calls[0][0].bytes, 1200);
}

TEST(DimBackends, AllToAllChunksStayWhole) {
  // An all-to-all of 1200 B in 2 chunks on 2 x 3: every stage moves the whole 600 B chunk.
  sched::Schedule s;
  s.op = CollectiveKind::kAllToAll;
  s.size_bytes = 1200;
  s.num_chunks = 2;
  s.chunks = {{{{Phase::kAllToAll, 0}, {Phase::kAllToAll, 1}}}, {{{Phase::kAllToAll, 1}, {Phase::kAllToAll, 0}}}};
  for (const auto& dim : dim_calls(s, {2, 3})) {
    ASSERT_EQ(dim.size(), 2u);
    for (const auto& call : dim) {
      EXPECT_EQ(call.op, CollectiveKind::kAllToAll);
      EXPECT_DOUBLE_EQ(call.bytes, 600);
    }
  }
}

TEST(DimBackends, EstimateInterpolatesAndExtrapolates) {
  TuningTable t;
  t.tables[{CollectiveKind::kReduceScatter, 2}] = {row(100, 10, 100), row(1000, 50, 60)};
  // Between the rows: 10 + (50 - 10) x (550 - 100) / 900 = 30.
  EXPECT_DOUBLE_EQ(*t.estimate_us(CollectiveKind::kReduceScatter, 2, 550, "shm"), 30);
  // Below the smallest row: its time. Above the largest: scaled by bytes, 50 x 2000 / 1000.
  EXPECT_DOUBLE_EQ(*t.estimate_us(CollectiveKind::kReduceScatter, 2, 50, "shm"), 10);
  EXPECT_DOUBLE_EQ(*t.estimate_us(CollectiveKind::kReduceScatter, 2, 2000, "shm"), 100);
  EXPECT_DOUBLE_EQ(*t.estimate_us(CollectiveKind::kReduceScatter, 2, 2000, "gloo"), 120);
  EXPECT_FALSE(t.estimate_us(CollectiveKind::kReduceScatter, 2, 550, "mpi"));
  EXPECT_FALSE(t.estimate_us(CollectiveKind::kReduceScatter, 3, 550, "shm"));
  EXPECT_FALSE(t.estimate_us(CollectiveKind::kAllGather, 2, 550, "shm"));
}

TEST(DimBackends, AutoPicksTheFastestForEachDimensionsOwnCalls) {
  TuningTable t;
  for (CollectiveKind op : {CollectiveKind::kReduceScatter, CollectiveKind::kAllGather}) {
    t.tables[{op, 2}] = {row(100, 1, 2), row(1000, 10, 5)};   // gloo ahead at large sizes
    t.tables[{op, 3}] = {row(100, 1, 4), row(1000, 10, 40)};  // shm ahead everywhere
  }
  const auto c = choose_dim_backends(two_chunk_allreduce(), {2, 3}, {"auto"}, &t, {"shm", "gloo"});
  ASSERT_EQ(c.size(), 2u);
  // d1 (P = 2) runs 600, 600, 200, 200 B: shm 1 + 9 x 500/900 = 6 at 600 B and 1 + 9 x 100/900 = 2
  // at 200 B, 16 in all; gloo 2 + 3 x 500/900 = 11/3 and 2 + 3 x 100/900 = 7/3, 12 in all.
  EXPECT_EQ(c[0].backend, "gloo");
  EXPECT_EQ(c[0].chosen_by, "tuning table");
  EXPECT_NEAR(c[0].estimate_us.at("shm"), 16, 1e-9);
  EXPECT_NEAR(c[0].estimate_us.at("gloo"), 12, 1e-9);
  // d2 (P = 3) runs 300, 300, 600, 600 B: shm 3 + 3 + 6 + 6 = 18; gloo 12 + 12 + 24 + 24 = 72.
  EXPECT_EQ(c[1].backend, "shm");
  EXPECT_NEAR(c[1].estimate_us.at("shm"), 18, 1e-9);
  EXPECT_NEAR(c[1].estimate_us.at("gloo"), 72, 1e-9);
}

TEST(DimBackends, GivenNamesStayAndMissingRowsFallBackToTheDefault) {
  TuningTable t;
  t.tables[{CollectiveKind::kReduceScatter, 2}] = {row(100, 1, 2)};
  t.tables[{CollectiveKind::kAllGather, 2}] = {row(100, 1, 2)};
  // d1 given; d2 (P = 3) has no rows: the runtime's first backend, and the reason.
  const auto c = choose_dim_backends(two_chunk_allreduce(), {2, 3}, {"gloo", "auto"}, &t, {"shm", "gloo"});
  EXPECT_EQ(c[0].backend, "gloo");
  EXPECT_EQ(c[0].chosen_by, "given");
  EXPECT_EQ(c[1].backend, "shm");
  EXPECT_NE(c[1].chosen_by.find("world size 3"), std::string::npos) << c[1].chosen_by;
  EXPECT_TRUE(c[1].estimate_us.empty());
  // No table at all.
  const auto none = choose_dim_backends(two_chunk_allreduce(), {2, 3}, {"auto"}, nullptr, {"gloo", "shm"});
  EXPECT_EQ(none[0].backend, "gloo");
  EXPECT_NE(none[0].chosen_by.find("no tuning table"), std::string::npos);
  // A backend measured only for reduce-scatter is not a candidate: its estimate is incomplete.
  TuningTable half;
  half.tables[{CollectiveKind::kReduceScatter, 2}] = {row(100, 5, 1)};
  half.tables[{CollectiveKind::kAllGather, 2}] = {[] {
    TuningRow r;
    r.bytes = 100;
    r.time_us = {{"shm", 5}};
    return r;
  }()};
  const auto h = choose_dim_backends(two_chunk_allreduce(), {2, 3}, {"auto", "shm"}, &half, {"gloo", "shm"});
  EXPECT_EQ(h[0].backend, "shm");
  EXPECT_EQ(h[0].estimate_us.count("gloo"), 0u);
}

TEST(DimBackends, WrongNumberOfBackendsIsAnInputError) {
  EXPECT_THROW(choose_dim_backends(two_chunk_allreduce(), {2, 3}, {"shm", "gloo", "mpi"}, nullptr, {"shm"}),
               InputError);
}

}  // namespace
}  // namespace chorus::rt
