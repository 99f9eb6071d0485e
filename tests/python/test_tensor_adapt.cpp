// torch's split sizes as the runtime's counts and displacements (src/py/tensor_adapt.h), the
// arithmetic chorus._rt and the torch backend share. Expected values derived by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "py/tensor_adapt.h"

namespace {

using chorus::rt::Counts;
using namespace chorus::tensor_adapt;

TEST(TensorAdapt, ARowIsTheElementsOrBytesPerFirstDimensionIndex) {
  EXPECT_EQ(row_units(12, 4), 3u);   // a 4 x 3 tensor
  EXPECT_EQ(row_units(48, 4), 12u);  // the same in bytes of float32
  EXPECT_EQ(row_units(0, 0), 0u);    // no rows
}

TEST(TensorAdapt, DisplacementsArePrefixSumsOfCounts) {
  EXPECT_EQ(displacements({2, 0, 5, 1}), (Counts{0, 2, 2, 7}));
  EXPECT_EQ(displacements({}), Counts{});
}

TEST(TensorAdapt, EqualSplitsNeedADivisibleSize) {
  EXPECT_EQ(equal_block(12, 3), 4u);
  EXPECT_EQ(equal_block(0, 3), 0u);
  EXPECT_FALSE(equal_block(10, 4).has_value());
  EXPECT_FALSE(equal_block(10, 0).has_value());
  const Split s = equal_split(4, 3);
  EXPECT_EQ(s.counts, (Counts{4, 4, 4}));
  EXPECT_EQ(s.displs, (Counts{0, 4, 8}));
}

TEST(TensorAdapt, SplitSizesInRowsBecomeCountsAndDisplacements) {
  // A 6 x 2 tensor over 3 ranks: rows 1, 0, 5 -> elements 2, 0, 10 at 0, 2, 2.
  const std::vector<std::int64_t> sizes{1, 0, 5};
  const Split s = split_rows(sizes, 3, 6, 2);
  EXPECT_EQ(s.counts, (Counts{2, 0, 10}));
  EXPECT_EQ(s.displs, (Counts{0, 2, 2}));
  // The same tensor of float64 in bytes: 16 per row.
  const Split b = split_rows(sizes, 3, 6, 16);
  EXPECT_EQ(b.counts, (Counts{16, 0, 80}));
  EXPECT_EQ(b.displs, (Counts{0, 16, 16}));
}

SplitError error_of(const std::vector<std::int64_t>& sizes, std::size_t world, std::size_t rows) {
  try {
    split_rows(sizes, world, rows, 1);
  } catch (const SplitError& e) {
    return e;
  }
  ADD_FAILURE() << "no SplitError";
  return SplitError(SplitError::Kind::kLength, 0, 0);
}

TEST(TensorAdapt, BadSplitSizesNameTheLengthTheNegativeOneOrTheSum) {
  auto e = error_of({1, 1, 1}, 2, 3);  // three sizes for two ranks
  EXPECT_EQ(e.kind, SplitError::Kind::kLength);
  EXPECT_EQ(e.value, 3);
  e = error_of({4, -1, -2}, 3, 1);  // the first negative one, before the sum
  EXPECT_EQ(e.kind, SplitError::Kind::kNegative);
  EXPECT_EQ(e.index, 1u);
  EXPECT_EQ(e.value, -1);
  e = error_of({2, 2}, 2, 5);  // 4 rows of 5
  EXPECT_EQ(e.kind, SplitError::Kind::kSum);
  EXPECT_EQ(e.value, 4);
  EXPECT_NE(std::string(e.what()).find("add up to 4"), std::string::npos);
  // A size past the rows is named before any sum: two of 2^62 would overflow it.
  e = error_of({std::int64_t{1} << 62, std::int64_t{1} << 62}, 2, 5);
  EXPECT_EQ(e.kind, SplitError::Kind::kTooLarge);
  EXPECT_EQ(e.index, 0u);
  EXPECT_EQ(e.value, std::int64_t{1} << 62);
}

}  // namespace
