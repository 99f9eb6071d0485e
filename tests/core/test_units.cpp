#include <gtest/gtest.h>

#include "core/error.h"
#include "core/suggest.h"
#include "core/units.h"

namespace chorus {
namespace {

TEST(ParseBytes, AcceptsBinaryAndDecimalUnits) {
  EXPECT_EQ(parse_bytes("4096", "f"), 4096u);
  EXPECT_EQ(parse_bytes("64KiB", "f"), 64u * 1024);
  EXPECT_EQ(parse_bytes("1MiB", "f"), 1024u * 1024);
  EXPECT_EQ(parse_bytes("1GiB", "f"), 1024ull * 1024 * 1024);
  EXPECT_EQ(parse_bytes("100MB", "f"), 100'000'000u);
  EXPECT_EQ(parse_bytes("1.5GB", "f"), 1'500'000'000u);
  EXPECT_EQ(parse_bytes(" 2 mib ", "f"), 2u * 1024 * 1024);
}

TEST(ParseBytes, RejectsGarbageNamingTheField) {
  try {
    parse_bytes("12parsecs", "--size");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "--size");
    EXPECT_NE(std::string(e.what()).find("parsecs"), std::string::npos);
  }
  EXPECT_THROW(parse_bytes("", "--size"), InputError);
  EXPECT_THROW(parse_bytes("-5", "--size"), InputError);
  EXPECT_THROW(parse_bytes("0.5", "--size"), InputError);
}

TEST(Units, GbpsConversions) {
  EXPECT_DOUBLE_EQ(gbps_to_bytes_per_ns(800), 100.0);
  EXPECT_DOUBLE_EQ(transfer_time_ns(100, 800), 1.0);
}

TEST(Suggest, FindsCloseNames) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(did_you_mean("link_bandwith_gbps", {"link_bandwidth_gbps", "size"}),
            " (did you mean 'link_bandwidth_gbps'?)");
  EXPECT_EQ(did_you_mean("zzzzzz", {"size"}), "");
}

}  // namespace
}  // namespace chorus
