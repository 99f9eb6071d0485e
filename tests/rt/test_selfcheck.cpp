// rt_bench/selfcheck.h: the check every multi-process test relies on.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>
#include <vector>

#include "rt/runtime.h"
#include "rt_bench/selfcheck.h"

using chorus::CollectiveKind;

namespace rt = chorus::rt;
using rt::DType;
using rt::ReduceOp;
namespace selfcheck = chorus::rt::selfcheck;

// The self-check that every multi-process test relies on finds a wrong byte anywhere in a
// result, and a changed sentinel in a gap between results (all_gatherv leaves room between
// the blocks: those bytes must not be written), and names the element.
TEST(SelfCheck, FindsAWrongByteAndNamesTheElement) {
  rt::init({"shm"});
  {
    selfcheck::Case c("shm", CollectiveKind::kAllReduce, DType::f32, ReduceOp::sum, 1000, 7);
    c.issue(false);
    EXPECT_EQ(c.verify(), "");
    c.result()[4 * 123 + 2] ^= 1;
    EXPECT_NE(c.verify().find("element 123:"), std::string::npos) << c.verify();
    c.result()[4 * 123 + 2] ^= 1;
    c.result().back() ^= 0x40;
    EXPECT_NE(c.verify().find("element 999:"), std::string::npos) << c.verify();
  }
  {
    selfcheck::Case c("shm", CollectiveKind::kAllGatherv, DType::i32, ReduceOp::sum, 10, 0);
    c.issue(false);
    EXPECT_EQ(c.verify(), "");
    const std::vector<char> good = c.result();
    for (std::size_t i = 0; i < good.size(); ++i) {  // every byte, the gaps included
      c.result()[i] ^= 1;
      EXPECT_NE(c.verify().find(fmt::format("element {}:", i / 4)), std::string::npos) << i;
      c.result()[i] ^= 1;
    }
  }
  rt::finalize();
}

// #wrong counts wrong elements, not bytes: three elements changed (one in two bytes) are three;
// every operation with an in-place form checks out in place, and says so.
TEST(SelfCheck, CountsWrongElementsAndRunsInPlace) {
  rt::init({"shm"});
  {
    selfcheck::Case c("shm", CollectiveKind::kAllReduce, DType::f32, ReduceOp::sum, 1000, 0,
                      selfcheck::Placement::kOutOfPlace);
    c.issue(false);
    EXPECT_EQ(c.wrong_elements(), 0u);
    c.result()[4 * 3] ^= 1;
    c.result()[4 * 3 + 3] ^= 1;
    c.result()[4 * 10 + 1] ^= 1;
    c.result()[4 * 999 + 2] ^= 1;
    EXPECT_EQ(c.wrong_elements(), 3u);
    EXPECT_EQ(c.describe().find("in place"), std::string::npos);
  }
  for (CollectiveKind op :
       {CollectiveKind::kAllReduce, CollectiveKind::kReduce, CollectiveKind::kAllGather, CollectiveKind::kAllGatherv}) {
    ASSERT_TRUE(selfcheck::has_in_place(op));
    selfcheck::Case c("shm", op, DType::i32, ReduceOp::sum, 10, 0, selfcheck::Placement::kInPlace);
    c.issue(false);
    EXPECT_EQ(c.verify(), "") << c.describe();
    EXPECT_EQ(c.wrong_elements(), 0u) << c.describe();
    EXPECT_NE(c.describe().find("in place"), std::string::npos) << c.describe();
  }
  EXPECT_FALSE(selfcheck::has_in_place(CollectiveKind::kBroadcast));  // one buffer: no second form
  EXPECT_FALSE(selfcheck::has_in_place(CollectiveKind::kReduceScatter));
  rt::finalize();
}
