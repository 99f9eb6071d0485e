// ProcessGroupChorus's compressed calls (CHORUS_COMPRESSION): the translation from torch the
// runtime's compression policy needs (a call's data as float elements); the policy, a layer of
// the communicator, decides which calls travel compressed (rt::CompressionPolicy).
#include <ATen/ATen.h>

#include "torch_backend/process_group.h"

namespace chorus::torch_backend {

using rt::DType;

void ProcessGroupChorus::compress(rt::Call& call, const at::Tensor& t) {
  const rt::CompressionPolicy* policy = comms_[static_cast<std::size_t>(call.op)].compression();
  if (policy == nullptr || !policy->compresses(call.op)) return;
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
}

}  // namespace chorus::torch_backend
