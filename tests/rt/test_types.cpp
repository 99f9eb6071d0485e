// rt/types.h: the names of dtypes, reduce ops and operations, with their aliases, and the errors
// naming what is wrong.
#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "rt/types.h"

using chorus::CollectiveKind;

namespace rt = chorus::rt;
using rt::DType;
using rt::ReduceOp;

TEST(Parse, NamesAndAliasesParseAndUnknownNamesAreInputErrors) {
  EXPECT_EQ(rt::parse_dtype("bf16", "x"), DType::bf16);
  EXPECT_EQ(rt::parse_reduce_op("avg", "x"), ReduceOp::avg);
  EXPECT_EQ(rt::parse_op_kind("allreduce", "x"), CollectiveKind::kAllReduce);
  EXPECT_EQ(rt::parse_op_kind("all_to_allv", "x"), CollectiveKind::kAllToAllv);
  // The runtime's own aliases: "a2a" is nccl-tests' all-to-all, over one buffer.
  EXPECT_EQ(rt::parse_op_kind("a2a", "x"), CollectiveKind::kAllToAllSingle);
  EXPECT_EQ(rt::parse_op_kind("bcast", "x"), CollectiveKind::kBroadcast);
  EXPECT_THROW(rt::parse_op_kind("allreduc", "x"), chorus::InputError);
  EXPECT_THROW(rt::parse_dtype("f8", "--dtype"), chorus::InputError);
  try {
    rt::parse_reduce_op("mean", "--op");
    FAIL();
  } catch (const chorus::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sum, prod, min, max, avg"), std::string::npos);
  }
}
