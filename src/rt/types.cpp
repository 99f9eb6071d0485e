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

std::string_view to_string(OpKind op) {
  switch (op) {
    case OpKind::send:
      return "send";
    case OpKind::recv:
      return "recv";
    case OpKind::barrier:
      return "barrier";
    case OpKind::broadcast:
      return "broadcast";
    case OpKind::reduce:
      return "reduce";
    case OpKind::all_reduce:
      return "all_reduce";
    case OpKind::reduce_scatter:
      return "reduce_scatter";
    case OpKind::all_gather:
      return "all_gather";
    case OpKind::gather:
      return "gather";
    case OpKind::scatter:
      return "scatter";
    case OpKind::all_to_all:
      return "all_to_all";
    case OpKind::all_to_all_single:
      return "all_to_all_single";
    case OpKind::all_gatherv:
      return "all_gatherv";
    case OpKind::gatherv:
      return "gatherv";
    case OpKind::scatterv:
      return "scatterv";
    case OpKind::all_to_allv:
      return "all_to_allv";
  }
  return "?";
}

namespace {
std::string without_underscores(std::string_view text) {
  std::string out;
  for (char c : text)
    if (c != '_' && c != '-') out += c;
  return out;
}
}  // namespace

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

OpKind parse_op_kind(std::string_view text, const std::string& where) {
  const std::string key = without_underscores(text);
  if (key == "bcast") return OpKind::broadcast;
  if (key == "alltoallsingle" || key == "a2a") return OpKind::all_to_all_single;
  for (OpKind o : kAllOpKinds)
    if (key == without_underscores(to_string(o))) return o;
  // Listed as the CLI's help lists them; "all_reduce", torch's spelling, is the same name.
  std::vector<std::string> names;
  for (OpKind o : kAllOpKinds) names.push_back(without_underscores(to_string(o)));
  throw InputError(
      where, fmt::format("unknown operation '{}'{}; operations: {} (underscores optional: all_reduce = allreduce)",
                         text, did_you_mean(without_underscores(text), names), fmt::join(names, ", ")));
}

}  // namespace chorus::rt
