#include "rt/dtype.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>

namespace chorus::rt {

float f16_to_f32(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  std::uint32_t mantissa = bits & 0x3ffu;
  std::uint32_t out;
  if (exponent == 0x1f) {
    out = sign | 0x7f800000u | (mantissa << 13);  // inf or NaN
  } else if (exponent != 0) {
    out = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    out = sign;  // signed zero
  } else {
    // Subnormal half: normalise into a float.
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    mantissa &= 0x3ffu;
    out = sign | (static_cast<std::uint32_t>(113 - shift) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(out);
}

std::uint16_t f32_to_f16(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    const std::uint16_t nan_bit = abs > 0x7f800000u ? 0x200u : 0u;
    return static_cast<std::uint16_t>(sign | 0x7c00u | nan_bit);
  }
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {
    // Result is subnormal (or zero) in half: value = m * 2^-24.
    if (abs < 0x33000000u) return sign;  // below half of the smallest subnormal
    const std::uint32_t exp = abs >> 23;
    const std::uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - exp;  // 14 + (113 - exp) - 1 ... chosen so result is m
    std::uint32_t m = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u);
    const std::uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (m & 1u))) ++m;
    return static_cast<std::uint16_t>(sign | m);
  }
  // Normal: rebias exponent, round mantissa from 23 to 10 bits (nearest even).
  std::uint32_t h = ((abs >> 13) - (112u << 10));
  const std::uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into exponent: fine
  return static_cast<std::uint16_t>(sign | h);
}

float bf16_to_f32(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

std::uint16_t f32_to_bf16(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

namespace {

struct F16 {
  static float load(std::uint16_t v) { return f16_to_f32(v); }
  static std::uint16_t store(float v) { return f32_to_f16(v); }
};
struct BF16 {
  static float load(std::uint16_t v) { return bf16_to_f32(v); }
  static std::uint16_t store(float v) { return f32_to_bf16(v); }
};

template <typename T>
T combine(ReduceOp op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg:
        return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
      case ReduceOp::prod:
        return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
      case ReduceOp::min:
        return b < a ? b : a;
      case ReduceOp::max:
        return a < b ? b : a;
    }
  } else {
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg:
        return a + b;
      case ReduceOp::prod:
        return a * b;
      case ReduceOp::min:
        return b < a ? b : a;
      case ReduceOp::max:
        return a < b ? b : a;
    }
  }
  return a;
}

// Loops are written per operator so the compiler vectorises each one.
template <typename T>
void reduce_native(ReduceOp op, T* out, const T* a, const T* b, std::size_t n) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg:
      for (std::size_t i = 0; i < n; ++i) out[i] = combine(ReduceOp::sum, a[i], b[i]);
      return;
    case ReduceOp::prod:
      for (std::size_t i = 0; i < n; ++i) out[i] = combine(ReduceOp::prod, a[i], b[i]);
      return;
    case ReduceOp::min:
      for (std::size_t i = 0; i < n; ++i) out[i] = combine(ReduceOp::min, a[i], b[i]);
      return;
    case ReduceOp::max:
      for (std::size_t i = 0; i < n; ++i) out[i] = combine(ReduceOp::max, a[i], b[i]);
      return;
  }
}

template <typename Codec>
void reduce_half(ReduceOp op, std::uint16_t* out, const std::uint16_t* a, const std::uint16_t* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = Codec::store(combine(op, Codec::load(a[i]), Codec::load(b[i])));
}

template <typename T>
void typed_reduce(ReduceOp op, void* out, const void* a, const void* b, std::size_t n) {
  reduce_native(op, static_cast<T*>(out), static_cast<const T*>(a), static_cast<const T*>(b), n);
}

template <typename T>
void typed_divide(void* buf, std::size_t n, int divisor) {
  T* p = static_cast<T*>(buf);
  if constexpr (std::is_integral_v<T>) {
    for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<std::int64_t>(p[i]) / divisor);
  } else {
    for (std::size_t i = 0; i < n; ++i) p[i] = p[i] / static_cast<T>(divisor);
  }
}

template <typename Codec>
void half_divide(void* buf, std::size_t n, int divisor) {
  auto* p = static_cast<std::uint16_t*>(buf);
  for (std::size_t i = 0; i < n; ++i) p[i] = Codec::store(Codec::load(p[i]) / static_cast<float>(divisor));
}

template <typename T>
double typed_load(const void* buf, std::size_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(buf) + i * sizeof(T), sizeof(T));
  return static_cast<double>(v);
}

template <typename T>
void typed_store(void* buf, std::size_t i, double value) {
  const T v = static_cast<T>(value);
  std::memcpy(static_cast<char*>(buf) + i * sizeof(T), &v, sizeof(T));
}

}  // namespace

void reduce_into(DType dtype, ReduceOp op, void* out, const void* a, const void* b, std::size_t count) {
  switch (dtype) {
    case DType::f16:
      reduce_half<F16>(op, static_cast<std::uint16_t*>(out), static_cast<const std::uint16_t*>(a),
                       static_cast<const std::uint16_t*>(b), count);
      return;
    case DType::bf16:
      reduce_half<BF16>(op, static_cast<std::uint16_t*>(out), static_cast<const std::uint16_t*>(a),
                        static_cast<const std::uint16_t*>(b), count);
      return;
    case DType::f32:
      typed_reduce<float>(op, out, a, b, count);
      return;
    case DType::f64:
      typed_reduce<double>(op, out, a, b, count);
      return;
    case DType::i8:
      typed_reduce<std::int8_t>(op, out, a, b, count);
      return;
    case DType::u8:
      typed_reduce<std::uint8_t>(op, out, a, b, count);
      return;
    case DType::i32:
      typed_reduce<std::int32_t>(op, out, a, b, count);
      return;
    case DType::i64:
      typed_reduce<std::int64_t>(op, out, a, b, count);
      return;
  }
}

double reduce_scalar(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::prod:
      return a * b;
    case ReduceOp::min:
      return std::min(a, b);
    case ReduceOp::max:
      return std::max(a, b);
    default:  // sum, avg
      return a + b;
  }
}

void divide_by(DType dtype, void* buf, std::size_t count, int divisor) {
  switch (dtype) {
    case DType::f16:
      half_divide<F16>(buf, count, divisor);
      return;
    case DType::bf16:
      half_divide<BF16>(buf, count, divisor);
      return;
    case DType::f32:
      typed_divide<float>(buf, count, divisor);
      return;
    case DType::f64:
      typed_divide<double>(buf, count, divisor);
      return;
    case DType::i8:
      typed_divide<std::int8_t>(buf, count, divisor);
      return;
    case DType::u8:
      typed_divide<std::uint8_t>(buf, count, divisor);
      return;
    case DType::i32:
      typed_divide<std::int32_t>(buf, count, divisor);
      return;
    case DType::i64:
      typed_divide<std::int64_t>(buf, count, divisor);
      return;
  }
}

double load_as_double(DType dtype, const void* buf, std::size_t index) {
  switch (dtype) {
    case DType::f16: {
      std::uint16_t v;
      std::memcpy(&v, static_cast<const char*>(buf) + 2 * index, 2);
      return f16_to_f32(v);
    }
    case DType::bf16: {
      std::uint16_t v;
      std::memcpy(&v, static_cast<const char*>(buf) + 2 * index, 2);
      return bf16_to_f32(v);
    }
    case DType::f32:
      return typed_load<float>(buf, index);
    case DType::f64:
      return typed_load<double>(buf, index);
    case DType::i8:
      return typed_load<std::int8_t>(buf, index);
    case DType::u8:
      return typed_load<std::uint8_t>(buf, index);
    case DType::i32:
      return typed_load<std::int32_t>(buf, index);
    case DType::i64:
      return typed_load<std::int64_t>(buf, index);
  }
  return 0;
}

void store_from_double(DType dtype, void* buf, std::size_t index, double value) {
  switch (dtype) {
    case DType::f16: {
      const std::uint16_t v = f32_to_f16(static_cast<float>(value));
      std::memcpy(static_cast<char*>(buf) + 2 * index, &v, 2);
      return;
    }
    case DType::bf16: {
      const std::uint16_t v = f32_to_bf16(static_cast<float>(value));
      std::memcpy(static_cast<char*>(buf) + 2 * index, &v, 2);
      return;
    }
    case DType::f32:
      typed_store<float>(buf, index, value);
      return;
    case DType::f64:
      typed_store<double>(buf, index, value);
      return;
    case DType::i8:
      typed_store<std::int8_t>(buf, index, value);
      return;
    case DType::u8:
      typed_store<std::uint8_t>(buf, index, value);
      return;
    case DType::i32:
      typed_store<std::int32_t>(buf, index, value);
      return;
    case DType::i64:
      typed_store<std::int64_t>(buf, index, value);
      return;
  }
}

}  // namespace chorus::rt
