#include "rt/types.h"

#include <array>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/suggest.h"

namespace chorus::rt {

std::string_view to_string(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::i8:
      return "i8";
    case DType::u8:
      return "u8";
    case DType::i32:
      return "i32";
    case DType::i64:
      return "i64";
  }
  return "?";
}

std::string_view to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return "sum";
    case ReduceOp::prod:
      return "prod";
    case ReduceOp::min:
      return "min";
    case ReduceOp::max:
      return "max";
    case ReduceOp::avg:
      return "avg";
  }
  return "?";
}

DType parse_dtype(std::string_view text, const std::string& where) {
  for (DType d : kAllDTypes)
    if (text == to_string(d)) return d;
  if (text == "float16" || text == "half") return DType::f16;
  if (text == "bfloat16") return DType::bf16;
  if (text == "float32" || text == "float") return DType::f32;
  if (text == "float64" || text == "double") return DType::f64;
  throw InputError(where,
                   "unknown dtype '" + std::string(text) + "' (expected one of f16, bf16, f32, f64, i8, u8, i32, i64)");
}

ReduceOp parse_reduce_op(std::string_view text, const std::string& where) {
  for (ReduceOp o : kAllReduceOps)
    if (text == to_string(o)) return o;
  throw InputError(where, "unknown reduce op '" + std::string(text) + "' (expected one of sum, prod, min, max, avg)");
}

CollectiveKind parse_op_kind(std::string_view text, const std::string& where) {
  const std::string key = fold_kind_name(text);
  if (key == "bcast") return CollectiveKind::kBroadcast;
  if (key == "a2a") return CollectiveKind::kAllToAllSingle;
  if (const auto found = find_collective_kind(text, kAllCollectiveKinds)) return *found;
  // Listed as the CLI's help lists them; "all_reduce", torch's spelling, is the same name.
  std::vector<std::string> names;
  for (CollectiveKind o : kAllCollectiveKinds) names.push_back(compact_name(o));
  throw InputError(
      where, fmt::format("unknown operation '{}'{}; operations: {} (underscores optional: all_reduce = allreduce)",
                         text, did_you_mean(key, names), fmt::join(names, ", ")));
}

}  // namespace chorus::rt
