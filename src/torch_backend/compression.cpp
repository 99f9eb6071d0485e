// ProcessGroupChorus's compressed calls (CHORUS_COMPRESSION): which operations on which tensors
// travel compressed, as what count of which float type.
#include <ATen/ATen.h>

#include "torch_backend/process_group.h"

namespace chorus::torch_backend {

using rt::DType;

void ProcessGroupChorus::compress(rt::Call& call, const at::Tensor& t) {
  const auto& bound = compression_.bound(call.op);
  if (!bound) return;
  if (call.op == CollectiveKind::kAllReduce && call.reduce_op != rt::ReduceOp::sum &&
      call.reduce_op != rt::ReduceOp::avg)
    return;  // the compressed all-reduce sums
  auto n = static_cast<std::size_t>(t.numel());
  switch (t.scalar_type()) {
    case at::kFloat:
      call.dtype = DType::f32;
      break;
    case at::kDouble:
      call.dtype = DType::f64;
      break;
    case at::kComplexFloat:
      call.dtype = DType::f32;
      n *= 2;
      break;
    case at::kComplexDouble:
      call.dtype = DType::f64;
      n *= 2;
      break;
    default:
      return;  // zfp compresses float32 and float64
  }
  call.count = call.op == CollectiveKind::kAllToAllSingle ? n / static_cast<std::size_t>(size_) : n;
  call = rt::compressed_call(std::move(call), *bound, nullptr, &compression_totals_);
}

}  // namespace chorus::torch_backend
