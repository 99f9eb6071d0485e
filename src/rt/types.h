#pragma once
// Element types, reduction operators and operation kinds of the runtime (chorus::rt).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/collective_kind.h"

namespace chorus::rt {

// Element types of typed buffers. f16 is IEEE binary16, bf16 is bfloat16.
enum class DType : std::uint8_t { kF16, kBf16, kF32, kF64, kI8, kU8, kI32, kI64 };
inline constexpr DType kAllDTypes[] = {DType::kF16, DType::kBf16, DType::kF32, DType::kF64,
                                       DType::kI8,  DType::kU8,   DType::kI32, DType::kI64};

// Reduction operators. avg is sum followed by a division by the world size
// (truncating toward zero for integer types).
enum class ReduceOp : std::uint8_t { kSum, kProd, kMin, kMax, kAvg };
inline constexpr ReduceOp kAllReduceOps[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin, ReduceOp::kMax,
                                             ReduceOp::kAvg};

// Inline: every operation computes its message size with it.
constexpr std::size_t dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::kF16:
    case DType::kBf16:
      return 2;
    case DType::kF32:
    case DType::kI32:
      return 4;
    case DType::kF64:
    case DType::kI64:
      return 8;
    case DType::kI8:
    case DType::kU8:
      return 1;
  }
  return 1;
}
std::string_view to_string(DType dtype);
std::string_view to_string(ReduceOp op);
using chorus::to_string;  // of CollectiveKind (core/collective_kind.h)

// Parsers throw chorus::InputError naming `where` and listing the accepted names.
DType parse_dtype(std::string_view text, const std::string& where);
ReduceOp parse_reduce_op(std::string_view text, const std::string& where);
// Accepts the API names (all_reduce) and the short nccl-tests names (allreduce).
CollectiveKind parse_op_kind(std::string_view text, const std::string& where);

}  // namespace chorus::rt
