// The schedule executor's checks that need no ranks: the layout of pieces (against a brute
// force over every rank of the grid) and the validation of schedules (deadlocks, bad stages).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "rt/schedule/schedule_executor.h"

namespace chorus::rt {
namespace {

using coll::Phase;

RankGrid grid_at(std::vector<int> dims, int rank) {
  RankGrid g;
  g.dims = dims;
  g.rank = rank;
  for (int p : dims) {
    g.coords.push_back(rank % p);
    rank /= p;
  }
  for (std::size_t d = 0; d < dims.size(); ++d) g.groups.push_back("g" + std::to_string(d));
  return g;
}

sched::Schedule rs_schedule(std::vector<std::vector<int>> orders, CollectiveKind op = CollectiveKind::kReduceScatter) {
  sched::Schedule s;
  s.op = op;
  s.num_chunks = static_cast<int>(orders.size());
  for (const auto& o : orders) {
    sched::ChunkSchedule c;
    for (int d : o)
      c.stages.push_back({op == CollectiveKind::kAllGather ? Phase::kAllGather : Phase::kReduceScatter, d});
    if (op == CollectiveKind::kAllReduce)
      for (auto it = o.rbegin(); it != o.rend(); ++it) c.stages.push_back({Phase::kAllGather, *it});
    s.chunks.push_back(c);
  }
  // A dim_order that can always run: chunk after chunk, in stage order.
  const std::size_t dims = orders.empty() ? 0 : orders[0].size();
  s.dim_order.assign(dims, {});
  for (int c = 0; c < s.num_chunks; ++c)
    for (const auto& st : s.chunks[static_cast<std::size_t>(c)].stages)
      s.dim_order[static_cast<std::size_t>(st.dim)].push_back({c, st.phase});
  return s;
}

// Every rank's pieces of every chunk, however the chunks nest, tile the buffer exactly once.
TEST(ScheduleExecutor, PiecesOfAllRanksTileEveryChunk) {
  const std::vector<int> dims = {2, 3, 2};
  const auto s = rs_schedule({{0, 1, 2}, {2, 0, 1}, {1, 2, 0}});
  const std::size_t count = 3 * 12 * 5;  // chunks x ranks x 5
  std::vector<int> owner(count, -1);
  for (int r = 0; r < 12; ++r) {
    const ScheduleExecutor ex(grid_at(dims, r), s);
    for (const auto& [b, e] : ex.piece_ranges(count)) {
      EXPECT_EQ(e - b, 5u) << "rank " << r;
      for (std::size_t i = b; i < e; ++i) {
        ASSERT_LT(i, count);
        EXPECT_EQ(owner[i], -1) << "element " << i << " owned by ranks " << owner[i] << " and " << r;
        owner[i] = r;
      }
    }
  }
  EXPECT_EQ(std::count(owner.begin(), owner.end(), -1), 0);
  // Chunk 0 nests dimension 1 outermost: rank (c1, c2, c3) = (1, 0, 0), i.e. rank 1, owns the
  // first piece of the second half of chunk 0 (elements 30..35), by hand.
  EXPECT_EQ(owner[30], 1);
  // Chunk 1 nests dimension 3 first: the second half of chunk 1 (elements 90..119) belongs to
  // the ranks with c3 = 1, i.e. ranks 6..11.
  for (std::size_t i = 90; i < 120; ++i) EXPECT_GE(owner[i], 6) << i;
}

TEST(ScheduleExecutor, RejectsADeadlockingOrderNamingIt) {
  auto s = rs_schedule({{0, 1}, {1, 0}});
  // Dimension 1 runs chunk 1 first (its second stage), dimension 2 runs chunk 0 first (its
  // second stage): each waits for the other.
  s.dim_order[0] = {{1, Phase::kReduceScatter}, {0, Phase::kReduceScatter}};
  s.dim_order[1] = {{0, Phase::kReduceScatter}, {1, Phase::kReduceScatter}};
  try {
    ScheduleExecutor ex(grid_at({2, 2}, 0), s);
    FAIL() << "accepted a deadlocking order";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("deadlocks"), std::string::npos) << m;
    EXPECT_NE(m.find("dimension 1 must run chunk 1 RS on dimension 1 next"), std::string::npos) << m;
  }
}

TEST(ScheduleExecutor, RejectsBadSchedules) {
  auto expect_error = [](const sched::Schedule& s, const std::string& needle) {
    try {
      ScheduleExecutor ex(grid_at({2, 2}, 0), s);
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto ar = rs_schedule({{0, 1}}, CollectiveKind::kAllReduce);
  ar.chunks[0].stages[2].dim = 0;  // all-gather not the reverse of the reduce-scatter
  ar.chunks[0].stages[3].dim = 1;
  expect_error(ar, "the all-gathers in the reverse order");
  auto missing = rs_schedule({{0, 1}, {1, 0}});
  missing.dim_order[1].pop_back();
  expect_error(missing, "dim_order misses chunk 1 RS on dimension 2");  // its last entry: chunk 1, stage 0
  auto twice = rs_schedule({{0, 1}});
  twice.dim_order[0].push_back({0, Phase::kReduceScatter});
  expect_error(twice, "appears twice");
  // All-to-all: one A2A stage per dimension; RS stages, or a dimension twice, are refused.
  auto a2a = rs_schedule({{0, 1}});
  a2a.op = CollectiveKind::kAllToAll;
  expect_error(a2a, "chunk 0: the executor needs one all-to-all stage on each of the 2 dimensions");
  a2a.chunks[0].stages = {{Phase::kAllToAll, 1}, {Phase::kAllToAll, 1}};
  expect_error(a2a, "chunk 0: the executor needs one all-to-all stage on each of the 2 dimensions");
  a2a.chunks[0].stages = {{Phase::kAllToAll, 1}, {Phase::kAllToAll, 0}};
  a2a.dim_order = {{{0, Phase::kAllToAll}}, {{0, Phase::kAllToAll}}};
  EXPECT_NO_THROW(ScheduleExecutor(grid_at({2, 2}, 0), a2a));
  auto three_dims = rs_schedule({{0, 1, 2}});
  expect_error(three_dims, "chunk 0: the executor needs stages visiting each of the 2 dimensions once");
}

}  // namespace
}  // namespace chorus::rt
