// Tensor fusion's operations: each is checked (backend, root, buffers), given its Work and
// queued for the cycle thread, which is woken when the queue was empty or holds B bytes.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "rt/call.h"
#include "rt/fusion/fusion_impl.h"

namespace chorus::rt {

Work Fusion::all_reduce(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
                        ReduceOp op) {
  return impl_->submit({CollectiveKind::kAllReduce, std::string(backend), static_cast<const std::byte*>(in),
                        static_cast<std::byte*>(out), count, dtype, op, -1, nullptr});
}

Work Fusion::broadcast(std::string_view backend, void* buf, std::size_t count, DType dtype, int root) {
  return impl_->submit({CollectiveKind::kBroadcast, std::string(backend), static_cast<const std::byte*>(buf),
                        static_cast<std::byte*>(buf), count * dtype_bytes(dtype), DType::u8, ReduceOp::sum, root,
                        nullptr});
}

Work Fusion::all_gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype) {
  return impl_->submit({CollectiveKind::kAllGather, std::string(backend), static_cast<const std::byte*>(in),
                        static_cast<std::byte*>(out), count * dtype_bytes(dtype), DType::u8, ReduceOp::sum, -1,
                        nullptr});
}

Work Fusion::reduce_scatter(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
                            ReduceOp op) {
  return impl_->submit({CollectiveKind::kReduceScatter, std::string(backend), static_cast<const std::byte*>(in),
                        static_cast<std::byte*>(out), count, dtype, op, -1, nullptr});
}

Work Fusion::all_to_all_single(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype) {
  return impl_->submit({CollectiveKind::kAllToAllSingle, std::string(backend), static_cast<const std::byte*>(in),
                        static_cast<std::byte*>(out), count * dtype_bytes(dtype), DType::u8, ReduceOp::sum, -1,
                        nullptr});
}

Work Fusion::all_to_allv(std::string_view backend, const void* in, const std::vector<std::size_t>& send_counts,
                         const std::vector<std::size_t>& send_displs, void* out,
                         const std::vector<std::size_t>& recv_counts, const std::vector<std::size_t>& recv_displs,
                         DType dtype) {
  const std::size_t world = impl_->shared->world;
  const std::string what = fmt::format("fused {} on rank {}", to_string(CollectiveKind::kAllToAllv), impl_->world_rank);
  const std::pair<const std::vector<std::size_t>*, const char*> lists[] = {{&send_counts, "send counts"},
                                                                           {&send_displs, "send displacements"},
                                                                           {&recv_counts, "receive counts"},
                                                                           {&recv_displs, "receive displacements"}};
  for (const auto& [list, name] : lists)
    if (list->size() != world) throw InputError(what, fmt::format("{} {} for {} ranks", list->size(), name, world));
  const std::size_t esize = dtype_bytes(dtype);
  fusion_detail::FusedOp p{CollectiveKind::kAllToAllv,
                           std::string(backend),
                           static_cast<const std::byte*>(in),
                           static_cast<std::byte*>(out),
                           0,
                           DType::u8,
                           ReduceOp::sum,
                           -1,
                           nullptr};
  std::size_t sent = 0, received = 0;
  for (std::size_t j = 0; j < world; ++j) {
    p.send_counts.push_back(send_counts[j] * esize);
    p.send_displs.push_back(send_displs[j] * esize);
    p.recv_counts.push_back(recv_counts[j] * esize);
    p.recv_displs.push_back(recv_displs[j] * esize);
    p.count = std::max({p.count, p.send_counts[j], p.recv_counts[j]});
    sent += send_counts[j];
    received += recv_counts[j];
  }
  if ((sent > 0 && in == nullptr) || (received > 0 && out == nullptr))
    throw InputError(what, fmt::format("null buffer for {} elements", sent > 0 && in == nullptr ? sent : received));
  return impl_->submit(std::move(p));
}

Work Fusion::reduce(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                    int root) {
  return impl_->submit({CollectiveKind::kReduce, std::string(backend), static_cast<const std::byte*>(in),
                        static_cast<std::byte*>(out), count, dtype, op, root, nullptr});
}

Work Fusion::gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, int root) {
  return impl_->submit({CollectiveKind::kGather, std::string(backend), static_cast<const std::byte*>(in),
                        static_cast<std::byte*>(out), count * dtype_bytes(dtype), DType::u8, ReduceOp::sum, root,
                        nullptr});
}

Work Fusion::scatter(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, int root) {
  return impl_->submit({CollectiveKind::kScatter, std::string(backend), static_cast<const std::byte*>(in),
                        static_cast<std::byte*>(out), count * dtype_bytes(dtype), DType::u8, ReduceOp::sum, root,
                        nullptr});
}

Work Fusion::Impl::submit(FusedOp p) {
  const std::string what = fmt::format("fused {}", to_string(p.kind));
  const std::string_view base =
      std::string_view(p.backend).substr(0, p.backend.find(':'));  // "mpi:ring": an algorithm of mpi
  if (p.backend != "auto" && std::find(backends.begin(), backends.end(), base) == backends.end())
    throw InputError(
        what, fmt::format("backend '{}' is not one of this fusion's ({}, auto)", p.backend, fmt::join(backends, ", ")));
  if (!takes_algorithm(p.kind) && base != p.backend)
    throw InputError(what, fmt::format("backend '{}': {} takes no algorithm", p.backend, to_string(p.kind)));
  const int world = static_cast<int>(shared->world);
  if (p.root != -1 && (p.root < 0 || p.root >= world))
    throw InputError(what, fmt::format("root {} is not a rank of the world (size {})", p.root, world));
  // A scatter reads `in`, a reduce and a gather write `out`, at the root only.
  const bool root_only_in = p.kind == CollectiveKind::kScatter,
             root_only_out = p.kind == CollectiveKind::kReduce || p.kind == CollectiveKind::kGather;
  if (p.count > 0 && p.kind != CollectiveKind::kAllToAllv &&
      ((p.in == nullptr && !(root_only_in && world_rank != p.root)) ||
       (p.out == nullptr && !(root_only_out && world_rank != p.root))))
    throw InputError(what, fmt::format("null buffer for {} elements", p.count));
  p.state = std::make_shared<WorkState>(what, nullptr);
  Work work(p.state);
  if (p.count == 0 &&
      p.kind != CollectiveKind::kAllToAllv) {  // nothing to move, on every rank alike (an uneven one: here only)
    p.state->complete(nullptr);
    return work;
  }
  bool wake = false;
  {
    std::lock_guard lock(mutex);
    if (stopping) throw std::logic_error(what + " after the Fusion began to stop");
    if (broken) {
      p.state->complete(broken);
      return work;
    }
    if (queue.empty()) {
      oldest_ns = steady_now_ns();
      wake = true;
    }
    queued_bytes += p.bytes();
    queue.push_back(std::move(p));
    wake = wake || queued_bytes >= options.buffer_bytes;
    ++stats.ops;
  }
  if (wake) cv.notify_all();
  return work;
}

}  // namespace chorus::rt
