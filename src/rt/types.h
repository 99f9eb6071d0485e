#pragma once
// Element types, reduction operators and operation kinds of the runtime (chorus::rt).
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "core/collective_kind.h"

namespace chorus::rt {

// The two enums of the API's signatures (README, docs/runtime.md) keep the spelling user code
// writes, DType::f32 and ReduceOp::avg, as torch's and MPI's names read; every other enum of
// chorus names its enumerators kCamelCase.

// Element types of typed buffers. f16 is IEEE binary16, bf16 is bfloat16.
enum class DType : std::uint8_t { f16, bf16, f32, f64, i8, u8, i32, i64 };
inline constexpr DType kAllDTypes[] = {DType::f16, DType::bf16, DType::f32, DType::f64,
                                       DType::i8,  DType::u8,   DType::i32, DType::i64};

// Reduction operators. avg is sum followed by a division by the world size
// (truncating toward zero for integer types).
enum class ReduceOp : std::uint8_t { sum, prod, min, max, avg };
inline constexpr ReduceOp kAllReduceOps[] = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max,
                                             ReduceOp::avg};

// Inline, a table lookup: every operation computes its message size with it, several times.
[[gnu::always_inline]] constexpr std::size_t dtype_bytes(DType dtype) {
  constexpr std::uint8_t kBytes[] = {2, 2, 4, 8, 1, 1, 4, 8};  // in the order of DType
  const auto i = static_cast<std::size_t>(dtype);
  return i < std::size(kBytes) ? kBytes[i] : 1;
}
static_assert(dtype_bytes(DType::bf16) == 2 && dtype_bytes(DType::f64) == 8 && dtype_bytes(DType::u8) == 1 &&
              dtype_bytes(DType::i32) == 4 && dtype_bytes(DType::i64) == 8);
std::string_view to_string(DType dtype);
std::string_view to_string(ReduceOp op);
using chorus::to_string;  // of CollectiveKind (core/collective_kind.h)

// Parsers throw chorus::InputError naming `where` and listing the accepted names.
DType parse_dtype(std::string_view text, const std::string& where);
ReduceOp parse_reduce_op(std::string_view text, const std::string& where);
// Accepts the API names (all_reduce) and the short nccl-tests names (allreduce).
CollectiveKind parse_op_kind(std::string_view text, const std::string& where);

}  // namespace chorus::rt
