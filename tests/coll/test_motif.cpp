// SYNDICATE's motif algebra (Sec. 4.2.1, Appendix A.1): hand-derived transforms, the byte-level
// validity check on hand-broken plans, and seeded random compositions (docs/motifs.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "coll/motif/compose.h"
#include "coll/motif/pattern.h"
#include "coll/motif/segment.h"
#include "coll/motif/spline_all_to_all.h"
#include "coll/motif/spline_broadcast.h"
#include "coll/motif/spline_ring.h"
#include "coll/motif/spline_tree.h"
#include "coll/motif/validate.h"
#include "core/error.h"

namespace chorus::coll::motif {
namespace {

constexpr Bytes kMB = 1000 * 1000;

std::string problems_text(const MotifPlan& plan) {
  std::string s;
  for (const auto& p : check(plan)) s += p + "\n";
  return s;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(MotifSegment, TenMegabytesByFourGivesFourFourTwo) {
  const auto plan =
      compose(single_motif_plan(make_comm_op(CollectiveKind::kAllReduce, 8, 10 * kMB)), {segmentation(4 * kMB)});
  ASSERT_EQ(plan.motifs.size(), 3u);
  const std::vector<ByteRange> want{{0, 4 * kMB}, {4 * kMB, 8 * kMB}, {8 * kMB, 10 * kMB}};
  for (std::size_t s = 0; s < 3; ++s) {
    EXPECT_EQ(plan.motifs[s].kind, CollectiveKind::kAllReduce);
    EXPECT_EQ(plan.motifs[s].bytes, want[s]);
    EXPECT_EQ(plan.motifs[s].ranks.size(), 8u);
    EXPECT_TRUE(plan.motifs[s].after.empty()) << "segments are independent";
  }
  EXPECT_EQ(problems_text(plan), "");
}

TEST(MotifSegment, DividingAndNotApplying) {
  const auto op = make_comm_op(CollectiveKind::kBroadcast, 4, 8, 1);
  const auto halves = compose(single_motif_plan(op), {segmentation(4)});  // Fig. 8: two halves
  ASSERT_EQ(halves.motifs.size(), 2u);
  EXPECT_EQ(halves.motifs[0].bytes, (ByteRange{0, 4}));
  EXPECT_EQ(halves.motifs[1].bytes, (ByteRange{4, 8}));
  EXPECT_EQ(halves.motifs[1].root, 1);
  EXPECT_EQ(problems_text(halves), "");
  EXPECT_FALSE(segment(single_motif_plan(op).motifs[0], 8).has_value()) << "d = D leaves the motif";
  EXPECT_THROW(segmentation(0), InputError);
}

TEST(MotifSpline, AllToAllEightRanksByTwo) {
  const auto plan = compose(single_motif_plan(make_comm_op(CollectiveKind::kAllToAll, 8, 100)), {splining(2)});
  ASSERT_EQ(plan.motifs.size(), 4u);
  // Motif c: source i sends to (i + 2c) % 8 and (i + 2c + 1) % 8, written out by hand.
  const std::vector<std::vector<std::vector<int>>> want{
      {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 0}},
      {{2, 3}, {3, 4}, {4, 5}, {5, 6}, {6, 7}, {7, 0}, {0, 1}, {1, 2}},
      {{4, 5}, {5, 6}, {6, 7}, {7, 0}, {0, 1}, {1, 2}, {2, 3}, {3, 4}},
      {{6, 7}, {7, 0}, {0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 6}}};
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_EQ(plan.motifs[c].ranks, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(plan.motifs[c].destinations, want[c]) << "motif " << c;
    EXPECT_EQ(plan.motifs[c].bytes, (ByteRange{0, 100}));
  }
  EXPECT_EQ(problems_text(plan), "");
}

TEST(MotifSpline, AllToAllUnevenGroups) {
  // N = 5, n = 2: three motifs, the last with one destination per source.
  const auto plan = compose(single_motif_plan(make_comm_op(CollectiveKind::kAllToAll, 5, 3)), {splining(2)});
  ASSERT_EQ(plan.motifs.size(), 3u);
  EXPECT_EQ(plan.motifs[2].destinations, (std::vector<std::vector<int>>{{4}, {0}, {1}, {2}, {3}}));
  EXPECT_EQ(plan.motifs[1].destinations[3], (std::vector<int>{0, 1}));
  EXPECT_EQ(problems_text(plan), "");
}

TEST(MotifSpline, SegmentThenSplineAllToAll) {
  const auto plan = compose(single_motif_plan(make_comm_op(CollectiveKind::kAllToAll, 8, 10 * kMB)),
                            {segmentation(4 * kMB), splining(2)});
  ASSERT_EQ(plan.motifs.size(), 12u);
  EXPECT_EQ(plan.motifs[5].bytes, (ByteRange{4 * kMB, 8 * kMB}));  // segment 1, spline 1
  EXPECT_EQ(plan.motifs[5].destinations[6], (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.motifs[5].label, "AA/S1/P1");
  EXPECT_EQ(problems_text(plan), "");
}

TEST(MotifSpline, BroadcastToSubsets) {
  // Fig. 9 on 5 ranks, root 2: destinations 3, 4, 0, 1 in pairs.
  const auto plan = compose(single_motif_plan(make_comm_op(CollectiveKind::kBroadcast, 5, 10, 2)), {splining(2)});
  ASSERT_EQ(plan.motifs.size(), 2u);
  EXPECT_EQ(plan.motifs[0].ranks, (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(plan.motifs[1].ranks, (std::vector<int>{2, 0, 1}));
  EXPECT_EQ(plan.motifs[1].root, 2);
  EXPECT_EQ(problems_text(plan), "");
  EXPECT_FALSE(
      spline_broadcast(single_motif_plan(make_comm_op(CollectiveKind::kBroadcast, 5, 10, 2)).motifs[0], 4).has_value());
}

TEST(MotifSpline, RingIsReduceScatterThenAllGather) {
  const auto plan = compose(single_motif_plan(make_comm_op(CollectiveKind::kAllReduce, 3, 6)), {ring_splining()});
  ASSERT_EQ(plan.motifs.size(), 2u);
  EXPECT_EQ(plan.motifs[0].kind, CollectiveKind::kReduceScatter);
  EXPECT_EQ(plan.motifs[1].kind, CollectiveKind::kAllGather);
  EXPECT_EQ(plan.motifs[1].after, (std::vector<int>{0}));
  EXPECT_EQ(problems_text(plan), "");

  // The ring's N-1 = 2 rounds on pieces [0,2) [2,4) [4,6), worked by hand: in round r position
  // i adds piece (i - r) mod 3 into position i + 1.
  const auto rs = pattern(plan.motifs[0]);
  struct Row {
    int round, src, dst;
    ByteRange bytes;
  };
  const std::vector<Row> want{{0, 0, 1, {0, 2}}, {0, 1, 2, {2, 4}}, {0, 2, 0, {4, 6}},
                              {1, 0, 1, {4, 6}}, {1, 1, 2, {0, 2}}, {1, 2, 0, {2, 4}}};
  ASSERT_EQ(rs.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(rs[k].round, want[k].round);
    EXPECT_EQ(rs[k].src.rank, want[k].src);
    EXPECT_EQ(rs[k].dst.rank, want[k].dst);
    EXPECT_EQ(rs[k].bytes, want[k].bytes);
    EXPECT_TRUE(rs[k].reduce);
  }
  // All-gather: position i first forwards the piece it owns, (i + 1) mod 3.
  const auto ag = pattern(plan.motifs[1]);
  ASSERT_EQ(ag.size(), 6u);
  EXPECT_EQ(ag[0].bytes, (ByteRange{2, 4}));
  EXPECT_FALSE(ag[0].reduce);
  EXPECT_EQ(ag[5].round, 1);
  EXPECT_EQ(ag[5].bytes, (ByteRange{4, 6}));  // position 2 forwards piece 2, received in round 0
}

TEST(MotifSpline, RingNeedsNMinusOneRounds) {
  // The appendix says "for N rounds". N-1 rounds per phase are the fewest that work: with N-2
  // the reduce-scatter leaves every piece one contribution short. An N-th round is redundant:
  // it adds a finished piece into a neighbour that does not own it, which the all-gather then
  // overwrites, and the all-gather's N-th round copies a piece its neighbour already has.
  const auto plan = compose(single_motif_plan(make_comm_op(CollectiveKind::kAllReduce, 4, 8)), {ring_splining()});
  const auto rounds = [](int r) { return [r](const Motif& m) { return ring_pattern(m, r); }; };
  std::string short_text;
  for (const auto& p : check(plan, rounds(2))) short_text += p + "\n";
  EXPECT_TRUE(contains(short_text, "is missing")) << short_text;
  EXPECT_TRUE(check(plan, rounds(4)).empty());
  EXPECT_EQ(problems_text(plan), "");
  EXPECT_EQ(pattern(plan.motifs[0]).size(), 12u);  // 3 rounds x 4 ranks
  EXPECT_EQ(ring_pattern(plan.motifs[0], 4).size(), 16u);
}

TEST(MotifSpline, TwoLevelTreeForEightRanksByTwo) {
  const auto plan = compose(single_motif_plan(make_comm_op(CollectiveKind::kAllReduce, 8, 64)), {splining(2)});
  struct Row {
    CollectiveKind kind;
    std::vector<int> ranks;
    int root;
    std::vector<int> after;
  };
  const std::vector<Row> want{
      {CollectiveKind::kReduce, {0, 1}, 0, {}},         {CollectiveKind::kReduce, {2, 3}, 2, {}},
      {CollectiveKind::kReduce, {4, 5}, 4, {}},         {CollectiveKind::kReduce, {6, 7}, 6, {}},
      {CollectiveKind::kReduce, {0, 2}, 0, {0, 1}},     {CollectiveKind::kReduce, {4, 6}, 4, {2, 3}},
      {CollectiveKind::kAllReduce, {0, 4}, -1, {4, 5}}, {CollectiveKind::kBroadcast, {0, 2}, 0, {6}},
      {CollectiveKind::kBroadcast, {4, 6}, 4, {6}},     {CollectiveKind::kBroadcast, {0, 1}, 0, {6}},
      {CollectiveKind::kBroadcast, {2, 3}, 2, {7}},     {CollectiveKind::kBroadcast, {4, 5}, 4, {6}},
      {CollectiveKind::kBroadcast, {6, 7}, 6, {8}}};
  ASSERT_EQ(plan.motifs.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(plan.motifs[k].kind, want[k].kind) << k;
    EXPECT_EQ(plan.motifs[k].ranks, want[k].ranks) << k;
    EXPECT_EQ(plan.motifs[k].root, want[k].root) << k;
    EXPECT_EQ(plan.motifs[k].after, want[k].after) << k;
  }
  EXPECT_EQ(problems_text(plan), "");

  // One level: 4 reduces, the all-reduce among roots {0,2,4,6}, 4 broadcasts.
  const auto one =
      compose(single_motif_plan(make_comm_op(CollectiveKind::kAllReduce, 8, 64)), {tree_splining(2, false)});
  ASSERT_EQ(one.motifs.size(), 9u);
  EXPECT_EQ(one.motifs[4].ranks, (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(one.motifs[4].after, (std::vector<int>{0, 1, 2, 3}));
  for (std::size_t k = 5; k < 9; ++k) EXPECT_EQ(one.motifs[k].after, (std::vector<int>{4}));
  EXPECT_EQ(problems_text(one), "");
  EXPECT_THROW(tree_splining(1, true), InputError);
}

TEST(MotifSpline, TreeWithALoneRank) {
  // N = 5, n = 2: groups {0,1} {2,3} {4}; rank 4 is only a root. Inner {0,2,4}: {0,2} {4}.
  const auto plan = compose(single_motif_plan(make_comm_op(CollectiveKind::kAllReduce, 5, 7)), {splining(2)});
  ASSERT_EQ(plan.motifs.size(), 7u);
  EXPECT_EQ(plan.motifs[2].ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(plan.motifs[3].kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(plan.motifs[3].ranks, (std::vector<int>{0, 4}));
  EXPECT_EQ(plan.motifs[6].ranks, (std::vector<int>{2, 3}));
  // RE{0,2} waits for both reduces, AR{0,4} for RE{0,2}; BC{0,2} for the AR; BC{0,1} needs rank 0
  // as the AR left it, BC{2,3} rank 2 as BC{0,2} left it.
  const std::vector<std::vector<int>> after{{}, {}, {0, 1}, {2}, {3}, {3}, {4}};
  for (std::size_t k = 0; k < after.size(); ++k) EXPECT_EQ(plan.motifs[k].after, after[k]) << k;
  EXPECT_EQ(problems_text(plan), "");
}

TEST(MotifCompose, ChildrenInheritDependencies) {
  // P(ring) then S(2) on 6 bytes: three RS segments, then three AG segments each after all RS.
  const auto plan =
      compose(single_motif_plan(make_comm_op(CollectiveKind::kAllReduce, 4, 6)), {ring_splining(), segmentation(2)});
  ASSERT_EQ(plan.motifs.size(), 6u);
  for (int s = 0; s < 3; ++s) {
    EXPECT_EQ(plan.motifs[static_cast<std::size_t>(s)].kind, CollectiveKind::kReduceScatter);
    EXPECT_TRUE(plan.motifs[static_cast<std::size_t>(s)].after.empty());
    EXPECT_EQ(plan.motifs[static_cast<std::size_t>(3 + s)].after, (std::vector<int>{0, 1, 2}));
  }
  EXPECT_EQ(problems_text(plan), "");
  // S(2) then P(ring): each segment its own RS -> AG.
  const auto other =
      compose(single_motif_plan(make_comm_op(CollectiveKind::kAllReduce, 4, 6)), {segmentation(2), ring_splining()});
  ASSERT_EQ(other.motifs.size(), 6u);
  EXPECT_EQ(other.motifs[3].after, (std::vector<int>{2}));
  EXPECT_TRUE(other.motifs[4].after.empty());
  EXPECT_EQ(problems_text(other), "");
}

TEST(MotifCompose, ParsesTransforms) {
  const auto plan = compose(single_motif_plan(make_comm_op(CollectiveKind::kAllReduce, 4, 1000)),
                            {parse_transform("S:400", "t"), parse_transform("P:ring", "t")});
  EXPECT_EQ(plan.motifs.size(), 6u);
  EXPECT_EQ(parse_transform("P:tree1:3", "t").name, "P(tree1:3)");
  EXPECT_THROW(parse_transform("Q:2", "t"), InputError);
  EXPECT_THROW(parse_transform("P:0", "t"), InputError);
  EXPECT_THROW(parse_transform("S:lots", "t"), InputError);
  EXPECT_THROW(make_comm_op(CollectiveKind::kReduce, 4, 10), InputError);
  EXPECT_THROW(make_comm_op(CollectiveKind::kBroadcast, 4, 10, 4), InputError);
}

// ---- the validity check on broken plans ----

TEST(MotifValidate, DroppedReduceLosesContributions) {
  auto plan = compose(single_motif_plan(make_comm_op(CollectiveKind::kAllReduce, 4, 8)), {tree_splining(2, false)});
  // RE_2{2,3}, AR{0,2}, BC_0{0,1}, BC_2{2,3}: drop RE_2 (motif #1).
  ASSERT_EQ(plan.motifs[1].ranks, (std::vector<int>{2, 3}));
  plan.motifs.erase(plan.motifs.begin() + 1);
  plan.motifs[1].after = {0};
  for (std::size_t k = 2; k < plan.motifs.size(); ++k) plan.motifs[k].after = {1};
  const auto text = problems_text(plan);
  EXPECT_TRUE(contains(text, "rank 0 bytes [0,8) end with contributions {0,1,2} instead of {0,1,2,3}; 3 is missing"))
      << text;
}

TEST(MotifValidate, DuplicatesAreCaught) {
  // An independent copy of a segment runs in parallel with it: both write the same bytes.
  auto plan = compose(single_motif_plan(make_comm_op(CollectiveKind::kAllReduce, 3, 10)), {segmentation(4)});
  plan.motifs.push_back(plan.motifs[1]);
  auto text = problems_text(plan);
  EXPECT_TRUE(contains(text, "motif #1 (") && contains(text, "and motif #3 (") && contains(text, "no dependency path"))
      << text;
  // Ordered after the original, the copy adds every contribution a second time.
  plan.motifs.back().after = {1};
  text = problems_text(plan);
  EXPECT_TRUE(contains(text, "rank 0 bytes [4,8) end with contributions {0,0,0,1,1,1,2,2,2}")) << text;
  EXPECT_TRUE(contains(text, "0 is counted 3 times")) << text;

  // An all-to-all motif issued twice in order covers its bytes twice.
  auto a2a = compose(single_motif_plan(make_comm_op(CollectiveKind::kAllToAll, 4, 5)), {splining(2)});
  a2a.motifs.push_back(a2a.motifs[0]);
  a2a.motifs.back().after = {0};
  text = problems_text(a2a);
  EXPECT_TRUE(contains(
      text, "rank 1 receive block from 0 bytes [0,5) are written 2 times instead of 1 (covered more than once)"))
      << text;
}

TEST(MotifValidate, MissingBytesAndRanksAreNamed) {
  auto a2a = compose(single_motif_plan(make_comm_op(CollectiveKind::kAllToAll, 4, 9)), {segmentation(4), splining(2)});
  a2a.motifs.erase(a2a.motifs.begin() + 5);  // segment 2 ([8,9)), spline 1: i -> i+2, i+3
  // Exactly the 8 transfers i -> i+2, i+3 of the last byte are missing; all-to-all contributions
  // are numbered source * N + destination (positions).
  const auto problems = check(a2a);
  ASSERT_EQ(problems.size(), 8u) << problems_text(a2a);
  EXPECT_EQ(problems[4],
            "rank 2 receive block from 0 bytes [8,9) end with contributions {} instead of {2}; 2 is missing");
  EXPECT_EQ(problems[1],
            "rank 0 receive block from 2 bytes [8,9) end with contributions {} instead of {8}; 8 is missing");

  auto bc = compose(single_motif_plan(make_comm_op(CollectiveKind::kBroadcast, 4, 9, 0)), {splining(1)});
  bc.motifs[2].ranks.push_back(9);
  EXPECT_TRUE(contains(problems_text(bc), "motif #2: rank 9 is not one of the comm-op's ranks"));
  bc.motifs[2].ranks.pop_back();
  bc.motifs[2].bytes.end = 10;
  EXPECT_TRUE(contains(problems_text(bc), "motif #2: bytes [0,10) are empty or outside the payload [0,9)"));
}

TEST(MotifValidate, OrderAndCycles) {
  auto plan = compose(single_motif_plan(make_comm_op(CollectiveKind::kAllReduce, 4, 8)), {ring_splining()});
  // Reversed dependency: RS after AG while listed first.
  plan.motifs[1].after.clear();
  plan.motifs[0].after = {1};
  EXPECT_TRUE(
      contains(problems_text(plan), "motif #0 (RS[0,8) on ranks {0,1,2,3} after #1) is listed before its parent #1"));
  // Relisted in that order (AG, then RS), the order is legal but the result is not.
  std::swap(plan.motifs[0], plan.motifs[1]);
  plan.motifs[0].after.clear();
  plan.motifs[1].after = {0};
  auto text = problems_text(plan);
  EXPECT_TRUE(contains(text, "instead of {0,1,2,3}")) << text;
  // Without any dependency RS and AG race.
  plan.motifs[1].after.clear();
  EXPECT_TRUE(contains(problems_text(plan), "no dependency path"));
  // A cycle.
  plan.motifs[0].after = {1};
  plan.motifs[1].after = {0};
  EXPECT_TRUE(contains(problems_text(plan), "the dependencies have a cycle through motifs #0 #1"));
  EXPECT_THROW(validate(plan), std::invalid_argument);
}

TEST(MotifValidate, WrongKindsAndRoots) {
  auto plan = single_motif_plan(make_comm_op(CollectiveKind::kAllToAll, 3, 4));
  plan.motifs[0].kind = CollectiveKind::kAllReduce;
  plan.motifs[0].destinations.clear();
  EXPECT_TRUE(contains(problems_text(plan), "a all_to_all cannot contain a all_reduce motif"));
  auto bc = single_motif_plan(make_comm_op(CollectiveKind::kBroadcast, 3, 4, 1));
  bc.motifs[0].root = 0;  // the wrong root copies its empty buffer over the real root's
  EXPECT_EQ(problems_text(bc),
            "rank 0 bytes [0,4) end with contributions {} instead of {1}; 1 is missing\n"
            "rank 1 bytes [0,4) end with contributions {} instead of {1}; 1 is missing\n"
            "rank 2 bytes [0,4) end with contributions {} instead of {1}; 1 is missing\n");
  bc.motifs[0].root = 1;
  bc.motifs.push_back(bc.motifs[0]);
  bc.motifs[1].after = {0};
  EXPECT_EQ(problems_text(bc),
            "rank 0 bytes [0,4) are written 2 times instead of 1 (covered more than once)\n"
            "rank 2 bytes [0,4) are written 2 times instead of 1 (covered more than once)\n");
}

// ---- seeded random compositions ----

Transform random_transform(std::mt19937& rng, const CommOp& op) {
  const int n = static_cast<int>(op.ranks.size());
  switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
    case 0:
      return segmentation(std::uniform_int_distribution<Bytes>(1, std::max<Bytes>(1, op.bytes / 2))(rng));
    case 1:
      return splining(std::uniform_int_distribution<int>(1, std::max(1, n - 1))(rng));
    case 2:
      return ring_splining();
    default:
      return tree_splining(std::uniform_int_distribution<int>(2, std::max(2, n - 1))(rng), rng() % 2 == 0);
  }
}

MotifPlan random_plan(std::mt19937& rng, std::string& how) {
  const CollectiveKind kinds[] = {CollectiveKind::kAllReduce, CollectiveKind::kAllToAll, CollectiveKind::kBroadcast};
  const CollectiveKind kind = kinds[rng() % 3];
  const int n = std::uniform_int_distribution<int>(2, 12)(rng);
  const Bytes bytes = std::uniform_int_distribution<Bytes>(1, 40)(rng);
  const auto op = make_comm_op(kind, n, bytes, static_cast<int>(rng() % static_cast<unsigned>(n)));
  std::vector<Transform> ts;
  const int steps = std::uniform_int_distribution<int>(1, 4)(rng);
  how = std::string(to_string(kind)) + " N=" + std::to_string(n) + " D=" + std::to_string(bytes) +
        " root=" + std::to_string(op.root);
  for (int s = 0; s < steps; ++s) {
    ts.push_back(random_transform(rng, op));
    how += " " + ts.back().name;
  }
  return compose(single_motif_plan(op), ts);
}

TEST(MotifProperties, RandomCompositionsAreValid) {
  std::mt19937 rng(20261122);
  int split = 0, deep = 0;
  for (int iter = 0; iter < 400; ++iter) {
    std::string how;
    const auto plan = random_plan(rng, how);
    EXPECT_EQ(problems_text(plan), "") << how;
    split += plan.motifs.size() > 1 ? 1 : 0;
    deep += plan.motifs.size() > 10 ? 1 : 0;
    // The motifs of one segment-and-spline family carry the payload: every motif's bytes lie in [0, D).
    for (const auto& m : plan.motifs) {
      EXPECT_LE(m.bytes.end, plan.op.bytes) << how;
      EXPECT_GE(transfer_count(m), pattern(m).size()) << how << " " << describe(m);
    }
  }
  // The seed gives a spread of plans, not only single motifs.
  EXPECT_GT(split, 300);
  EXPECT_GT(deep, 60);  // 83 with this seed
}

TEST(MotifProperties, MutatedPlansAreInvalid) {
  std::mt19937 rng(7);
  int dropped = 0, duplicated = 0, reversed = 0;
  for (int iter = 0; iter < 200; ++iter) {
    std::string how;
    const auto plan = random_plan(rng, how);
    ASSERT_EQ(problems_text(plan), "") << how;
    const auto count = plan.motifs.size();

    // Drop motif k; its children take over its parents.
    {
      const auto k = static_cast<int>(rng() % count);
      MotifPlan m{plan.op, {}};
      for (std::size_t i = 0; i < count; ++i) {
        if (static_cast<int>(i) == k) continue;
        Motif c = plan.motifs[i];
        std::vector<int> after;
        for (int p : c.after) {
          if (p == k) {
            after.insert(after.end(), plan.motifs[static_cast<std::size_t>(k)].after.begin(),
                         plan.motifs[static_cast<std::size_t>(k)].after.end());
          } else {
            after.push_back(p);
          }
        }
        for (int& p : after) p -= p > k ? 1 : 0;
        std::sort(after.begin(), after.end());
        after.erase(std::unique(after.begin(), after.end()), after.end());
        c.after = after;
        m.motifs.push_back(std::move(c));
      }
      EXPECT_NE(problems_text(m), "") << how << " without motif #" << k;
      ++dropped;
    }
    // Duplicate motif k (same parents).
    {
      MotifPlan m = plan;
      m.motifs.push_back(plan.motifs[rng() % count]);
      EXPECT_NE(problems_text(m), "") << how << " with a duplicate";
      ++duplicated;
    }
    // Reverse one dependency.
    std::vector<std::size_t> with_parents;
    for (std::size_t i = 0; i < count; ++i)
      if (!plan.motifs[i].after.empty()) with_parents.push_back(i);
    if (!with_parents.empty()) {
      MotifPlan m = plan;
      const auto child = with_parents[rng() % with_parents.size()];
      const int parent = m.motifs[child].after.front();
      m.motifs[child].after.erase(m.motifs[child].after.begin());
      m.motifs[static_cast<std::size_t>(parent)].after.push_back(static_cast<int>(child));
      EXPECT_NE(problems_text(m), "") << how << " with #" << parent << " after #" << child;
      ++reversed;
    }
  }
  EXPECT_EQ(dropped, 200);
  EXPECT_EQ(duplicated, 200);
  EXPECT_GE(reversed, 40);  // only plans with a dependency can have one reversed
}

}  // namespace
}  // namespace chorus::coll::motif
