// ProcessGroupChorus's compressed path (CHORUS_COMPRESSION): which operations on which tensors
// travel compressed, on which backend, run on that backend's Compressor or at once, and the bytes
// they saved.
#include <ATen/ATen.h>

#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "rt/runtime.h"
#include "torch_backend/process_group.h"
#include "torch_backend/torch_args.h"

namespace chorus::torch_backend {

using rt::DType;

std::optional<ProcessGroupChorus::Compressed> ProcessGroupChorus::compressed(CollectiveKind op,
                                                                             const at::Tensor& t) const {
  const auto& bound = compression_.bound(op);
  if (!bound) return std::nullopt;
  const std::size_t n = static_cast<std::size_t>(t.numel());
  switch (t.scalar_type()) {
    case at::kFloat:
      return Compressed{*bound, DType::f32, n};
    case at::kDouble:
      return Compressed{*bound, DType::f64, n};
    case at::kComplexFloat:
      return Compressed{*bound, DType::f32, 2 * n};
    case at::kComplexDouble:
      return Compressed{*bound, DType::f64, 2 * n};
    default:
      return std::nullopt;  // zfp compresses float32 and float64
  }
}

std::string ProcessGroupChorus::compressed_backend(CollectiveKind op) const {
  // all_reduce's "mpi:ring": the compressed ring is chorus's own, on mpi
  return group_.empty() ? plain_backend(backend_for(op)) : backend_for(op);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::run_compressed(TorchOp call) {
  const std::string backend = compressed_backend(call.kind);
  rt::Work w;
  if (const auto it = compressors_.find(backend); it != compressors_.end()) {
    using Lane = rt::compressed::Compressor::LaneKind;
    w = it->second->run(call.title, std::move(call.compressed), nullptr,
                        call.kind == CollectiveKind::kSend   ? Lane::kSend
                        : call.kind == CollectiveKind::kRecv ? Lane::kRecv
                                                             : Lane::kCollective);
  } else {
    rt::compressed::Stats st;
    call.compressed(backend, &st);
    std::lock_guard lock(stats_mutex_);
    stats_.raw_bytes += st.raw_bytes;
    stats_.wire_bytes += st.wire_bytes;
  }
  return WorkChorus::make(rank_, call.type, call.title, std::move(w), std::move(call.keep), std::move(call.outputs),
                          std::move(call.finish), pool_, std::move(call.staging));
}

rt::compressed::Stats ProcessGroupChorus::compression_stats() const {
  std::lock_guard lock(stats_mutex_);
  rt::compressed::Stats total = stats_;
  for (const auto& [backend, c] : compressors_) {
    const auto st = c->stats();
    total.raw_bytes += st.raw_bytes;
    total.wire_bytes += st.wire_bytes;
  }
  return total;
}

}  // namespace chorus::torch_backend
