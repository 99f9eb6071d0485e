#include "torch_backend/torch_args.h"

#include <fmt/format.h>

namespace chorus::torch_backend {

using rt::DType;

std::size_t nbytes(const at::Tensor& t) { return static_cast<std::size_t>(t.numel()) * t.element_size(); }

void check_tensor(const at::Tensor& t, std::string_view op, std::string_view what) {
  TORCH_CHECK_VALUE(t.defined(), "chorus: ", op, ": ", what, " is an undefined tensor");
  TORCH_CHECK_VALUE(t.device().is_cpu(), "chorus: ", op, ": ", what, " is on ", t.device().str(),
                    "; the chorus backend moves CPU tensors (use .cpu())");
  TORCH_CHECK_VALUE(t.layout() == at::kStrided, "chorus: ", op, ": ", what, " is not dense (layout ", t.layout(), ")");
  TORCH_CHECK_VALUE(t.is_contiguous(), "chorus: ", op, ": ", what, " is not contiguous (use .contiguous())");
}

at::Tensor& single(std::vector<at::Tensor>& tensors, std::string_view op, std::string_view what) {
  TORCH_CHECK_VALUE(tensors.size() == 1, "chorus: ", op, ": expected one ", what, " tensor per process, got ",
                    tensors.size());
  check_tensor(tensors[0], op, what);
  return tensors[0];
}

void same_kind(const at::Tensor& a, const at::Tensor& b, std::string_view op, std::string_view what) {
  TORCH_CHECK_TYPE(a.scalar_type() == b.scalar_type(), "chorus: ", op, ": ", what, " has dtype ", b.scalar_type(),
                   ", the input ", a.scalar_type());
}

void same_shape(const at::Tensor& a, const at::Tensor& b, std::string_view op, std::string_view what) {
  same_kind(a, b, op, what);
  TORCH_CHECK_VALUE(a.numel() == b.numel(), "chorus: ", op, ": ", what, " has ", b.numel(), " elements, the input ",
                    a.numel());
}

void check_list(const std::vector<at::Tensor>& list, const at::Tensor& like, std::string_view op,
                std::string_view name) {
  for (std::size_t j = 0; j < list.size(); ++j) {
    const std::string what = fmt::format("{}[{}]", name, j);
    check_tensor(list[j], op, what);
    same_shape(like, list[j], op, what);
  }
}

Reduction reduction_of(const at::Tensor& t, const c10d::ReduceOp& reduce_op, std::string_view op) {
  using R = c10d::ReduceOp;
  rt::ReduceOp rop = rt::ReduceOp::sum;
  switch (static_cast<R::RedOpType>(reduce_op)) {
    case R::SUM:
      rop = rt::ReduceOp::sum;
      break;
    case R::AVG:
      rop = rt::ReduceOp::avg;
      break;
    case R::PRODUCT:
      rop = rt::ReduceOp::prod;
      break;
    case R::MIN:
      rop = rt::ReduceOp::min;
      break;
    case R::MAX:
      rop = rt::ReduceOp::max;
      break;
    default:
      TORCH_CHECK_VALUE(
          false, "chorus: ", op, ": reduce op ", static_cast<int>(static_cast<R::RedOpType>(reduce_op)),
          " (BAND, BOR, BXOR or PREMUL_SUM) is not supported; chorus reduces with SUM, AVG, PRODUCT, MIN, MAX");
  }
  switch (t.scalar_type()) {
    case at::kHalf:
      return {DType::f16, 1, rop};
    case at::kBFloat16:
      return {DType::bf16, 1, rop};
    case at::kFloat:
      return {DType::f32, 1, rop};
    case at::kDouble:
      return {DType::f64, 1, rop};
    case at::kChar:
      return {DType::i8, 1, rop};
    case at::kByte:
      return {DType::u8, 1, rop};
    case at::kInt:
      return {DType::i32, 1, rop};
    case at::kLong:
      return {DType::i64, 1, rop};
    case at::kBool:
      // As NCCL: a sum of booleans is their logical or, a product their logical and.
      TORCH_CHECK_VALUE(rop != rt::ReduceOp::avg, "chorus: ", op, ": AVG of a bool tensor is undefined");
      if (rop == rt::ReduceOp::sum) rop = rt::ReduceOp::max;
      if (rop == rt::ReduceOp::prod) rop = rt::ReduceOp::min;
      return {DType::u8, 1, rop};
    case at::kComplexFloat:
    case at::kComplexDouble:
      TORCH_CHECK_VALUE(rop == rt::ReduceOp::sum || rop == rt::ReduceOp::avg, "chorus: ", op,
                        ": complex tensors reduce with SUM or AVG only (PRODUCT, MIN and MAX are not element-wise on "
                        "the real and imaginary parts)");
      return {t.scalar_type() == at::kComplexFloat ? DType::f32 : DType::f64, 2, rop};
    default:
      TORCH_CHECK_TYPE(false, "chorus: ", op, ": cannot reduce dtype ", t.scalar_type(),
                       "; chorus reduces float16, bfloat16, float32, float64, int8, uint8, int32, int64, bool, "
                       "complex64, complex128");
  }
  return {};
}

void check_rank(int r, int size, std::string_view op, std::string_view what) {
  TORCH_CHECK_VALUE(r >= 0 && r < size, "chorus: ", op, ": ", what, " ", r, " is not a rank of this group (size ", size,
                    ")");
}

// `tensors` one after another in a pooled staging buffer.
at::Tensor flatten(const std::vector<at::Tensor>& tensors, StagingPool& pool) {
  std::int64_t numel = 0;
  std::vector<at::Tensor> flat;
  flat.reserve(tensors.size());
  for (const auto& t : tensors) {
    flat.push_back(t.reshape({-1}));
    numel += t.numel();
  }
  at::Tensor out = pool.take(numel, tensors.at(0).scalar_type());
  at::cat_out(out, flat);
  return out;
}

// Copies consecutive pieces of `flat` into `tensors`.
void unflatten(const at::Tensor& flat, std::vector<at::Tensor>& tensors) {
  std::int64_t offset = 0;
  for (auto& t : tensors) {
    t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  }
}

void check_tag(int tag, std::string_view op) {
  TORCH_CHECK_VALUE(tag == 0, "chorus: ", op, ": tag ", tag,
                    ": tags are not supported (messages between two ranks match in the order they are issued); use "
                    "tag 0");
}

tensor_adapt::Split split_bytes(const at::Tensor& t, const std::vector<std::int64_t>& splits, int size,
                                std::string_view side) {
  const std::int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const std::size_t row_bytes = tensor_adapt::row_units(nbytes(t), static_cast<std::size_t>(rows));
  const auto world = static_cast<std::size_t>(size);
  if (splits.empty()) {
    const auto block = tensor_adapt::equal_block(static_cast<std::size_t>(rows), world);
    TORCH_CHECK_VALUE(block.has_value(), "chorus: all_to_all_single: ", side, " has ", rows,
                      " rows, not divisible by the world size ", size, " (give split sizes)");
    return tensor_adapt::equal_split(*block * row_bytes, world);
  }
  try {
    return tensor_adapt::split_rows(splits, world, static_cast<std::size_t>(rows), row_bytes);
  } catch (const tensor_adapt::SplitError& e) {
    using Kind = tensor_adapt::SplitError::Kind;
    TORCH_CHECK_VALUE(e.kind != Kind::kLength, "chorus: all_to_all_single: ", side, "_split_sizes has ", splits.size(),
                      " entries, the world size is ", size);
    TORCH_CHECK_VALUE(e.kind != Kind::kNegative, "chorus: all_to_all_single: ", side, "_split_sizes[", e.index,
                      "] = ", e.value, " is negative");
    TORCH_CHECK_VALUE(e.kind != Kind::kTooLarge, "chorus: all_to_all_single: ", side, "_split_sizes[", e.index,
                      "] = ", e.value, " is more than the ", side, "'s ", rows, " rows");
    TORCH_CHECK_VALUE(false, "chorus: all_to_all_single: ", side, "_split_sizes sum to ", e.value, ", the ", side,
                      " has ", rows, " rows");
    throw;
  }
}

}  // namespace chorus::torch_backend
