// CHORUS_COMPRESSION of the torch.distributed backend (src/torch_backend/compression_map.h).
#include <gtest/gtest.h>

#include "core/error.h"
#include "torch_backend/compression_map.h"

using chorus::CollectiveKind;
using chorus::InputError;
using chorus::kAllCollectiveKinds;
using chorus::rt::compressed::ErrorBound;
using chorus::torch_backend::CompressionMap;

namespace {

void expect_bound(const CompressionMap& m, CollectiveKind op, ErrorBound::Kind kind, double value) {
  ASSERT_TRUE(m.bound(op).has_value()) << chorus::rt::to_string(op);
  EXPECT_EQ(m.bound(op)->kind, kind) << chorus::rt::to_string(op);
  EXPECT_EQ(m.bound(op)->value, value) << chorus::rt::to_string(op);
}

}  // namespace

TEST(CompressionMap, EmptyCompressesNothing) {
  for (const char* text : {"", "  "}) {
    const CompressionMap m = CompressionMap::parse(text, "test");
    EXPECT_FALSE(m.any());
    for (CollectiveKind op : kAllCollectiveKinds) EXPECT_FALSE(m.bound(op).has_value());
  }
}

TEST(CompressionMap, ABoundAloneCoversTheFiveCompressibleOperations) {
  const CompressionMap m = CompressionMap::parse("abs:1e-4", "test");
  EXPECT_TRUE(m.any());
  for (CollectiveKind op : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kAllToAllSingle,
                            CollectiveKind::kSend, CollectiveKind::kRecv})
    expect_bound(m, op, ErrorBound::Kind::kAbsolute, 1e-4);
  for (CollectiveKind op :
       {CollectiveKind::kBroadcast, CollectiveKind::kReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll,
        CollectiveKind::kGather, CollectiveKind::kScatter, CollectiveKind::kBarrier})
    EXPECT_FALSE(m.bound(op).has_value()) << chorus::rt::to_string(op);
}

TEST(CompressionMap, NamedOperationsOverrideTheBoundForEveryOther) {
  const CompressionMap m = CompressionMap::parse(" all_reduce:prec:16 , precision:20", "test");
  expect_bound(m, CollectiveKind::kAllReduce, ErrorBound::Kind::kPrecision, 16);
  expect_bound(m, CollectiveKind::kAllGather, ErrorBound::Kind::kPrecision, 20);
  const CompressionMap only = CompressionMap::parse("all_to_all_single:absolute:0.5", "test");
  expect_bound(only, CollectiveKind::kAllToAllSingle, ErrorBound::Kind::kAbsolute, 0.5);
  EXPECT_FALSE(only.bound(CollectiveKind::kAllReduce).has_value());
  EXPECT_FALSE(only.bound(CollectiveKind::kSend).has_value());
}

TEST(CompressionMap, SendAndRecvShareABound) {
  expect_bound(CompressionMap::parse("recv:abs:0.25", "t"), CollectiveKind::kSend, ErrorBound::Kind::kAbsolute, 0.25);
  expect_bound(CompressionMap::parse("send:prec:8", "t"), CollectiveKind::kRecv, ErrorBound::Kind::kPrecision, 8);
  EXPECT_NO_THROW(CompressionMap::parse("send:abs:0.25,recv:abs:0.25", "t"));
  EXPECT_THROW(CompressionMap::parse("send:abs:0.25,recv:abs:0.5", "t"), InputError);
}

TEST(CompressionMap, BadEntriesAreNamed) {
  auto message = [](const char* text) {
    try {
      CompressionMap::parse(text, "environment CHORUS_COMPRESSION");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message("abs:1e-4,broadcast:abs:1").find("entry 2 ('broadcast:abs:1')"), std::string::npos);
  EXPECT_NE(message("broadcast:abs:1").find("no compressed form"), std::string::npos);
  EXPECT_NE(message("all_reduce").find("expected a bound"), std::string::npos);
  EXPECT_NE(message("abs:-1").find("CHORUS_COMPRESSION"), std::string::npos);
  EXPECT_NE(message("abs:1,prec:8").find("twice"), std::string::npos);
  EXPECT_NE(message("all_reduce:abs:1,all_reduce:abs:2").find("twice"), std::string::npos);
  EXPECT_NE(message("nope:abs:1").find("entry 1"), std::string::npos);
  EXPECT_NE(message("all_reduce:zfp:3").find("entry 1"), std::string::npos);
  EXPECT_NE(message("abs:1,").find("entry 2 ('')"), std::string::npos);
}
