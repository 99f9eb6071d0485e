#pragma once
// Arithmetic on typed buffers. f16 and bf16 are reduced as numbers: each element is
// widened to float, combined, and rounded back to nearest-even — never as raw bytes.
#include <cstddef>
#include <cstdint>

#include "rt/types.h"

namespace chorus::rt {

float f16_to_f32(std::uint16_t bits);
std::uint16_t f32_to_f16(float value);  // round to nearest even; overflow gives inf
float bf16_to_f32(std::uint16_t bits);
std::uint16_t f32_to_bf16(float value);  // round to nearest even; NaN stays NaN

// out[i] = a[i] (op) b[i] for i < count. out may alias a or b. avg combines as sum.
// Integer sum and prod wrap modulo 2^bits (two's complement), never undefined.
void reduce_into(DType dtype, ReduceOp op, void* out, const void* a, const void* b, std::size_t count);

// `op` on two values as doubles (avg as sum): what the self-checks' references fold, rank by rank.
double reduce_scalar(ReduceOp op, double a, double b);

// Finishes an avg: buf[i] /= divisor (integers truncate toward zero).
void divide_by(DType dtype, void* buf, std::size_t count, int divisor);

// Element value as double / from double (for tests, checks and tools).
double load_as_double(DType dtype, const void* buf, std::size_t index);
void store_from_double(DType dtype, void* buf, std::size_t index, double value);

}  // namespace chorus::rt
