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
  return issue(backend, calls::all_reduce(in, out, count, dtype, op));
}

Work Fusion::broadcast(std::string_view backend, void* buf, std::size_t count, DType dtype, int root) {
  return issue(backend, calls::broadcast(buf, count, dtype, root));
}

Work Fusion::all_gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype) {
  return issue(backend, calls::all_gather(in, out, count, dtype));
}

Work Fusion::reduce_scatter(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
                            ReduceOp op) {
  return issue(backend, calls::reduce_scatter(in, out, count, dtype, op));
}

Work Fusion::all_to_all_single(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype) {
  return issue(backend, calls::all_to_all_single(in, out, count, dtype));
}

Work Fusion::all_to_allv(std::string_view backend, const void* in, const std::vector<std::size_t>& send_counts,
                         const std::vector<std::size_t>& send_displs, void* out,
                         const std::vector<std::size_t>& recv_counts, const std::vector<std::size_t>& recv_displs,
                         DType dtype) {
  return issue(backend, calls::all_to_allv(in, send_counts, send_displs, out, recv_counts, recv_displs, dtype));
}

Work Fusion::reduce(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                    int root) {
  return issue(backend, calls::reduce(in, out, count, dtype, op, root));
}

Work Fusion::gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, int root) {
  return issue(backend, calls::gather(in, out, count, dtype, root));
}

Work Fusion::scatter(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, int root) {
  return issue(backend, calls::scatter(in, out, count, dtype, root));
}

Work Fusion::issue(std::string_view backend, Call call, bool start_now) {
  const CollectiveKind kind = call.op;
  const std::string what = fmt::format("fused {}", to_string(kind));
  if (!fuses(kind))
    throw InputError(what,
                     "is not fused: only all_reduce, broadcast, all_gather, reduce_scatter, all_to_all_single, "
                     "all_to_allv, reduce, gather and scatter are");
  if (call.compression) throw InputError(what, "a compressed call is not fused: issue it on the runtime");
  fusion_detail::FusedOp p{std::move(call), std::string(backend), nullptr};
  if (!traits(kind).reduces) {  // moves bytes: fused across dtypes
    const std::size_t esize = dtype_bytes(p.dtype);
    p.count *= esize;
    p.dtype = DType::u8;
    p.reduce_op = ReduceOp::sum;
    if (kind == CollectiveKind::kBroadcast) p.in = p.out;
    if (kind == CollectiveKind::kAllToAllv) {
      const std::size_t world = impl_->shared->world;
      const std::string where = fmt::format("{} on rank {}", what, impl_->world_rank);
      const CallLists& l = *p.lists;
      const std::pair<const Counts*, const char*> lists[] = {{&l.send_counts, "send counts"},
                                                             {&l.send_displs, "send displacements"},
                                                             {&l.recv_counts, "receive counts"},
                                                             {&l.recv_displs, "receive displacements"}};
      for (const auto& [list, name] : lists)
        if (list->size() != world)
          throw InputError(where, fmt::format("{} {} for {} ranks", list->size(), name, world));
      CallLists in_bytes;
      std::size_t sent = 0, received = 0;
      for (std::size_t j = 0; j < world; ++j) {
        in_bytes.send_counts.push_back(l.send_counts[j] * esize);
        in_bytes.send_displs.push_back(l.send_displs[j] * esize);
        in_bytes.recv_counts.push_back(l.recv_counts[j] * esize);
        in_bytes.recv_displs.push_back(l.recv_displs[j] * esize);
        p.count = std::max({p.count, in_bytes.send_counts[j], in_bytes.recv_counts[j]});
        sent += l.send_counts[j];
        received += l.recv_counts[j];
      }
      if ((sent > 0 && p.in == nullptr) || (received > 0 && p.out == nullptr))
        throw InputError(where,
                         fmt::format("null buffer for {} elements", sent > 0 && p.in == nullptr ? sent : received));
      p.lists = std::make_shared<const CallLists>(std::move(in_bytes));
    }
  }
  return impl_->submit(std::move(p), start_now);
}

Work Fusion::Impl::submit(FusedOp p, bool now) {
  const std::string what = fmt::format("fused {}", to_string(p.op));
  const std::string_view base =
      std::string_view(p.backend).substr(0, p.backend.find(':'));  // "mpi:ring": an algorithm of mpi
  if (p.backend != "auto" && std::find(backends.begin(), backends.end(), base) == backends.end())
    throw InputError(
        what, fmt::format("backend '{}' is not one of this fusion's ({}, auto)", p.backend, fmt::join(backends, ", ")));
  if (!takes_algorithm(p.op) && base != p.backend)
    throw InputError(what, fmt::format("backend '{}': {} takes no algorithm", p.backend, to_string(p.op)));
  const int world = static_cast<int>(shared->world);
  if (p.root != -1 && (p.root < 0 || p.root >= world))
    throw InputError(what, fmt::format("root {} is not a rank of the world (size {})", p.root, world));
  // A scatter reads `in`, a reduce and a gather write `out`, at the root only.
  const bool root_only_in = traits(p.op).input == Place::kRootOnly,
             root_only_out = traits(p.op).output == Place::kRootOnly;
  if (p.count > 0 && p.op != CollectiveKind::kAllToAllv &&
      ((p.in == nullptr && !(root_only_in && world_rank != p.root)) ||
       (p.out == nullptr && !(root_only_out && world_rank != p.root))))
    throw InputError(what, fmt::format("null buffer for {} elements", p.count));
  p.state = std::make_shared<WorkState>(what, nullptr);
  Work work(p.state);
  if (p.count == 0 &&
      p.op != CollectiveKind::kAllToAllv) {  // nothing to move, on every rank alike (an uneven one: here only)
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
    start_now = start_now || now;
    wake = wake || now || queued_bytes >= options.buffer_bytes;
    ++stats.ops;
  }
  if (wake) cv.notify_all();
  return work;
}

}  // namespace chorus::rt
