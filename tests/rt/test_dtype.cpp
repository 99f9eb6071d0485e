// rt/dtype.h: f16 and bf16 as numbers, the reductions of every dtype, avg's integer division.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "rt/dtype.h"

using chorus::CollectiveKind;

namespace rt = chorus::rt;
using rt::DType;
using rt::ReduceOp;

TEST(Dtype, HalfKnownValues) {
  EXPECT_EQ(rt::f32_to_f16(1.0f), 0x3C00);
  EXPECT_EQ(rt::f32_to_f16(-2.0f), 0xC000);
  EXPECT_EQ(rt::f32_to_f16(65504.0f), 0x7BFF);
  EXPECT_EQ(rt::f32_to_f16(65520.0f), 0x7C00);    // rounds to infinity
  EXPECT_EQ(rt::f32_to_f16(0x1.0p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(rt::f32_to_f16(0x1.0p-25f), 0x0000);  // tie to even: zero
  EXPECT_EQ(rt::f32_to_f16(0.1f), 0x2E66);
  EXPECT_EQ(rt::f32_to_f16(1.0f + 0x1.0p-11f), 0x3C00);  // tie to even (down)
  EXPECT_EQ(rt::f32_to_f16(1.0f + 0x1.8p-10f), 0x3C02);  // tie to even (up)
  EXPECT_FLOAT_EQ(rt::f16_to_f32(0x3555), 0.333251953125f);
}

TEST(Dtype, HalfRoundTripsEveryPattern) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if ((bits & 0x7C00) == 0x7C00 && (bits & 0x3FF) != 0) continue;  // NaN payloads
    ASSERT_EQ(rt::f32_to_f16(rt::f16_to_f32(bits)), bits) << std::hex << h;
  }
}

TEST(Dtype, Bfloat16RoundsToNearestEvenAndRoundTripsEveryNonNanPattern) {
  EXPECT_EQ(rt::f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(rt::f32_to_bf16(1.0f + 0x1.0p-8f), 0x3F80);  // tie to even
  EXPECT_EQ(rt::f32_to_bf16(1.0f + 0x1.8p-7f), 0x3F82);
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if ((bits & 0x7F80) == 0x7F80 && (bits & 0x7F) != 0) continue;
    ASSERT_EQ(rt::f32_to_bf16(rt::bf16_to_f32(bits)), bits) << std::hex << h;
  }
}

TEST(Dtype, HalfIsReducedAsNumbersNotBytes) {
  const std::uint16_t a[2] = {rt::f32_to_f16(1.0f), rt::f32_to_f16(3.5f)};
  const std::uint16_t b[2] = {rt::f32_to_f16(2.0f), rt::f32_to_f16(-0.5f)};
  std::uint16_t out[2];
  rt::reduce_into(DType::f16, ReduceOp::sum, out, a, b, 2);
  EXPECT_EQ(rt::f16_to_f32(out[0]), 3.0f);  // bytes 0x3C00 + 0x4000 would be infinity
  EXPECT_EQ(rt::f16_to_f32(out[1]), 3.0f);
  rt::reduce_into(DType::f16, ReduceOp::max, out, a, b, 2);
  EXPECT_EQ(rt::f16_to_f32(out[0]), 2.0f);
  EXPECT_EQ(rt::f16_to_f32(out[1]), 3.5f);
  const std::uint16_t c[1] = {rt::f32_to_bf16(-3.0f)}, d[1] = {rt::f32_to_bf16(0.5f)};
  rt::reduce_into(DType::bf16, ReduceOp::prod, out, c, d, 1);
  EXPECT_EQ(rt::bf16_to_f32(out[0]), -1.5f);
  rt::reduce_into(DType::bf16, ReduceOp::min, out, c, d, 1);
  EXPECT_EQ(rt::bf16_to_f32(out[0]), -3.0f);
}

TEST(Dtype, MaxIsNotSumAndIntegersWrap) {
  const std::int8_t a[3] = {100, -5, 7}, b[3] = {100, 3, -9};
  std::int8_t out[3];
  rt::reduce_into(DType::i8, ReduceOp::max, out, a, b, 3);
  EXPECT_EQ(out[0], 100);
  EXPECT_EQ(out[1], 3);
  EXPECT_EQ(out[2], 7);
  rt::reduce_into(DType::i8, ReduceOp::sum, out, a, b, 3);
  EXPECT_EQ(out[0], -56);  // wraps modulo 2^8
  const std::int64_t big[1] = {INT64_MAX}, one[1] = {1};
  std::int64_t w[1];
  rt::reduce_into(DType::i64, ReduceOp::sum, w, big, one, 1);
  EXPECT_EQ(w[0], INT64_MIN);
  std::int32_t v[2] = {-7, 7};
  rt::divide_by(DType::i32, v, 2, 2);
  EXPECT_EQ(v[0], -3);  // truncates toward zero
  EXPECT_EQ(v[1], 3);
  double f[1] = {5.0};
  rt::divide_by(DType::f64, f, 1, 4);
  EXPECT_EQ(f[0], 1.25);
}

TEST(Dtype, AvgOfIntegersTruncatesTowardZeroInEveryWidth) {
  // The avg finish (sum / ranks) by hand: C++ integer division, never floor, never rounding.
  std::int8_t i8[3] = {-128, 127, -1};
  rt::divide_by(DType::i8, i8, 3, 3);
  EXPECT_EQ(i8[0], -42);  // floor would give -43
  EXPECT_EQ(i8[1], 42);
  EXPECT_EQ(i8[2], 0);
  std::uint8_t u8[2] = {255, 2};
  rt::divide_by(DType::u8, u8, 2, 4);
  EXPECT_EQ(u8[0], 63);  // rounding would give 64
  EXPECT_EQ(u8[1], 0);
  std::int64_t i64[2] = {INT64_MIN, -9};
  rt::divide_by(DType::i64, i64, 2, 4);
  EXPECT_EQ(i64[0], INT64_MIN / 4);
  EXPECT_EQ(i64[1], -2);
  std::uint16_t h[1] = {rt::f32_to_f16(3.0f)};
  rt::divide_by(DType::f16, h, 1, 2);
  EXPECT_EQ(rt::f16_to_f32(h[0]), 1.5f);  // floating types divide exactly
}
