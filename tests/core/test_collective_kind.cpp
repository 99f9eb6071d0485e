// The one encoding of the collective kind (core/collective_kind.h) and the kinds each part of
// chorus accepts: Themis's four, SYNDICATE's six motifs, the runtime's sixteen.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "coll/collective.h"
#include "coll/motif/motif.h"
#include "core/collective_kind.h"
#include "core/error.h"
#include "net/presets.h"
#include "sched/scheduler.h"

namespace chorus {
namespace {

TEST(CollectiveKind, NamesAreDistinctAndCompactNamesDropTheUnderscores) {
  std::set<std::string> names, compact;
  for (CollectiveKind k : kAllCollectiveKinds) {
    names.insert(std::string(to_string(k)));
    compact.insert(compact_name(k));
  }
  EXPECT_EQ(names.size(), 16u);
  EXPECT_EQ(compact.size(), 16u);  // no two names differ only by underscores
  EXPECT_EQ(to_string(CollectiveKind::kAllToAllSingle), "all_to_all_single");
  EXPECT_EQ(compact_name(CollectiveKind::kReduceScatter), "reducescatter");
}

TEST(CollectiveKind, FindAcceptsOnlyTheGivenKinds) {
  EXPECT_EQ(find_collective_kind("All-Reduce", coll::kThemisCollectives), CollectiveKind::kAllReduce);
  EXPECT_EQ(find_collective_kind("reduce_scatter", coll::kThemisCollectives), CollectiveKind::kReduceScatter);
  // A broadcast is a motif but not a collective Themis schedules.
  EXPECT_FALSE(find_collective_kind("broadcast", coll::kThemisCollectives).has_value());
  EXPECT_EQ(find_collective_kind("broadcast", coll::motif::kMotifKinds), CollectiveKind::kBroadcast);
  EXPECT_FALSE(find_collective_kind("gatherv", coll::motif::kMotifKinds).has_value());
  EXPECT_EQ(find_collective_kind("gatherv", kAllCollectiveKinds), CollectiveKind::kGatherv);
  EXPECT_FALSE(find_collective_kind("allreduc", kAllCollectiveKinds).has_value());
}

// Each part keeps its short aliases ("a2a" is the model's all-to-all here; the runtime's are
// tested in tests/rt/test_types.cpp).
TEST(CollectiveKind, EachPartsAliases) {
  CollectiveKind k{};
  ASSERT_TRUE(coll::parse_collective_op("a2a", k));
  EXPECT_EQ(k, CollectiveKind::kAllToAll);
  ASSERT_TRUE(coll::parse_collective_op("RS", k));
  EXPECT_EQ(k, CollectiveKind::kReduceScatter);
  EXPECT_FALSE(coll::parse_collective_op("broadcast", k));
  ASSERT_TRUE(coll::motif::parse_kind("AA", k));
  EXPECT_EQ(k, CollectiveKind::kAllToAll);
  ASSERT_TRUE(coll::motif::parse_kind("re", k));
  EXPECT_EQ(k, CollectiveKind::kReduce);
  EXPECT_FALSE(coll::motif::parse_kind("scatter", k));
  EXPECT_EQ(coll::motif::short_name(CollectiveKind::kGather), "?");
}

// A schedule of a kind Themis does not schedule is refused by name, not simulated as nothing.
TEST(CollectiveKind, SchedulesRefuseOtherKinds) {
  const net::Network network = *net::find_preset("2D-SW_SW");
  for (const char* scheduler : {"baseline", "themis-scf", "ideal"}) {
    try {
      (void)sched::make_schedule(network, CollectiveKind::kBarrier, 1e6, 4, sched::parse_scheduler(scheduler));
      ADD_FAILURE() << scheduler << " scheduled a barrier";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("not barrier"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace chorus
