#pragma once
// torch's arguments as the runtime's, for ProcessGroupChorus: every check of a tensor or list
// (CPU, dense, contiguous, dtype, size, rank, tag) with torch's error types and chorus's words,
// a reduction's element type and operator, the list forms' staging copies, and all_to_all_single's
// split sizes as byte counts and displacements (the arithmetic is src/py/tensor_adapt's, shared
// with chorus._rt).
#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "py/tensor_adapt.h"
#include "rt/types.h"
#include "torch_backend/work_chorus.h"

namespace chorus::torch_backend {

constexpr rt::DType kBytes = rt::DType::u8;  // data movement is dtype-blind

std::size_t nbytes(const at::Tensor& t);

// Each throws c10::ValueError (c10::TypeError for a dtype) naming the operation `op` and `what`.
void check_tensor(const at::Tensor& t, std::string_view op, std::string_view what);
// The one tensor of a per-process list, checked.
at::Tensor& single(std::vector<at::Tensor>& tensors, std::string_view op, std::string_view what);
void same_kind(const at::Tensor& a, const at::Tensor& b, std::string_view op, std::string_view what);
void same_shape(const at::Tensor& a, const at::Tensor& b, std::string_view op, std::string_view what);
// Every tensor of `list` checked and of `like`'s dtype and size; named "<name>[j]".
void check_list(const std::vector<at::Tensor>& list, const at::Tensor& like, std::string_view op,
                std::string_view name);
void check_rank(int r, int size, std::string_view op, std::string_view what);
void check_tag(int tag, std::string_view op);

// A reduction's element type, element count factor (complex: two floats) and operator.
struct Reduction {
  rt::DType dtype;
  std::size_t factor = 1;
  rt::ReduceOp op;
};
Reduction reduction_of(const at::Tensor& t, const c10d::ReduceOp& reduce_op, std::string_view op);
inline std::size_t count_of(const at::Tensor& t, const Reduction& r) {
  return static_cast<std::size_t>(t.numel()) * r.factor;
}

// "mpi:ring" names all_reduce's algorithm on mpi: the backend is mpi.
inline std::string plain_backend(const std::string& backend) { return backend.substr(0, backend.find(':')); }

// `tensors` one after another in a pooled staging buffer.
at::Tensor flatten(const std::vector<at::Tensor>& tensors, StagingPool& pool);
// Copies consecutive pieces of `flat` into `tensors`.
void unflatten(const at::Tensor& flat, std::vector<at::Tensor>& tensors);

// Byte counts and displacements of an all_to_all_single side ("input" or "output"): `splits` rows
// per rank (empty: equal parts) of a tensor whose first dimension is split.
tensor_adapt::Split split_bytes(const at::Tensor& t, const std::vector<std::int64_t>& splits, int size,
                                std::string_view side);

}  // namespace chorus::torch_backend
