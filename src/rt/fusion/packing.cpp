// Tensor fusion's packing: a cycle's batch, in submission order, into fused buffers of at most B
// bytes per BufferKey (kind, backend, dtype, reduce op, root), each issued as one asynchronous
// operation on the fusion's group and unpacked into the callers' buffers when it completes;
// uneven all-to-alls packed block by block; an operation larger than B alone on its own buffers.
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "rt/fusion/fusion_impl.h"
#include "rt/runtime.h"

namespace chorus::rt {

namespace fusion_detail {

BufferKey key_of(const FusedOp& p) { return {p.kind, p.backend, p.dtype, p.op, p.root}; }

}  // namespace fusion_detail

// Packs the batch, in submission order, into buffers of at most B bytes per BufferKey.
void Fusion::Impl::issue() {
  using fusion_detail::BufferKey;
  std::map<BufferKey, std::pair<std::vector<FusedOp>, std::size_t>> open;  // ops and bytes of each open buffer
  std::vector<BufferKey> order;  // first appearance: buffers are issued in an order every rank shares
  auto close = [&](const BufferKey& key) {
    auto& [ops, bytes] = open[key];
    if (ops.empty()) return;
    std::string backend = std::get<1>(key);
    if (backend == "auto") backend = rt::resolve_backend("auto", std::get<0>(key), bytes);
    issue_buffer(backend, std::move(ops));
    ops.clear();
    bytes = 0;
  };
  for (auto& p : batch) {
    const BufferKey key = fusion_detail::key_of(p);
    if (open.find(key) == open.end()) order.push_back(key);
    auto& [ops, bytes] = open[key];
    if (bytes + p.bytes() > options.buffer_bytes) close(key);
    ops.push_back(std::move(p));
    bytes += ops.back().bytes();
  }
  for (const auto& key : order) close(key);
  batch.clear();
}

// Issues `ops` (one BufferKey, `backend` resolved) as one operation: alone on the caller's
// buffers when it is a single operation larger than B, else packed into a fused buffer and
// unpacked when it completes.
void Fusion::Impl::issue_buffer(const std::string& backend, std::vector<FusedOp> ops) {
  const FusedOp& first = ops.front();
  const CollectiveKind kind = first.kind;
  const DType dtype = first.dtype;
  const ReduceOp op = first.op;
  const int root = first.root;
  // "mpi:ring" (named, or chosen by auto from a tuning table): that algorithm on mpi's group.
  const auto colon = backend.find(':');
  const auto group = groups.find(backend.substr(0, colon));
  if (group == groups.end()) {  // "auto" resolved to a backend this fusion has no group on
    fail(ops, std::make_exception_ptr(
                  InputError(fmt::format("fused {}", to_string(kind)),
                             fmt::format("auto chose backend '{}', which this fusion does not use", backend))));
    return;
  }
  const std::string target = colon == std::string::npos ? group->second : group->second + backend.substr(colon);
  {
    std::lock_guard lock(mutex);
    ++stats.buffers;
  }
  {
    std::lock_guard lock(shared->mutex);
    ++shared->in_flight;
  }
  auto issue_one = [&](const std::byte* in, std::byte* out, std::size_t count) {
    switch (kind) {
      case CollectiveKind::kAllToAllv:  // alone only (issue_uneven packs): the operation's own counts
        return rt::all_to_allv(target, in, first.send_counts, first.send_displs, out, first.recv_counts,
                               first.recv_displs, DType::u8, /*async_op=*/true);
      case CollectiveKind::kBroadcast:
        return rt::broadcast(target, out, count, dtype, root, /*async_op=*/true);
      case CollectiveKind::kAllGather:
        return rt::all_gather(target, in, out, count, dtype, /*async_op=*/true);
      case CollectiveKind::kReduceScatter:
        return rt::reduce_scatter(target, in, out, count, dtype, op, /*async_op=*/true);
      case CollectiveKind::kAllToAllSingle:
        return rt::all_to_all_single(target, in, out, count, dtype, /*async_op=*/true);
      case CollectiveKind::kReduce:
        return rt::reduce(target, in, out, count, dtype, op, root, /*async_op=*/true);
      case CollectiveKind::kGather:
        return rt::gather(target, in, out, count, dtype, root, /*async_op=*/true);
      case CollectiveKind::kScatter:
        return rt::scatter(target, in, out, count, dtype, root, /*async_op=*/true);
      default:
        return rt::all_reduce(target, in, out, count, dtype, op, /*async_op=*/true);
    }
  };
  auto sh = shared;
  if (ops.size() == 1 && first.bytes() > options.buffer_bytes) {  // alone, on the caller's buffers
    try {
      Work w = issue_one(first.in, first.out, first.count);
      w.on_complete([sh, state = first.state](std::exception_ptr error) {
        state->complete(error);
        sh->done();
      });
    } catch (...) {  // refused before it was issued (an InputError of the backend)
      fail(ops, std::current_exception());
      sh->done();
    }
    return;
  }
  if (kind == CollectiveKind::kAllToAllv) {
    issue_uneven(target, std::move(ops));
    return;
  }
  // Pack, run, then copy each operation's part out. Per rank, an operation has `count` elements
  // (an all-gather's or gather's input, a reduce-scatter's or scatter's output, an all-to-all's
  // block); the fused buffer holds C of them. The sides that hold one block per rank (an
  // all-gather's and a gather's result, a reduce-scatter's and a scatter's input, both sides of
  // an all-to-all) are wide buffers of world x B bytes, block j holding every operation's block
  // j in submission order.
  const std::size_t esize = dtype_bytes(dtype);
  const bool wide_in = kind == CollectiveKind::kReduceScatter || kind == CollectiveKind::kAllToAllSingle ||
                       kind == CollectiveKind::kScatter;
  const bool wide_out =
      kind == CollectiveKind::kAllGather || kind == CollectiveKind::kAllToAllSingle || kind == CollectiveKind::kGather;
  const bool in_place =
      kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce;
  // What this rank sends and gets back: a broadcast's and a scatter's non-roots send nothing, a
  // broadcast's root gets nothing back, a reduce's and a gather's non-roots get nothing.
  const bool rooted_in = kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kScatter;
  const bool sends = !rooted_in || world_rank == root;
  const bool unpack = kind == CollectiveKind::kBroadcast                                   ? world_rank != root
                      : kind == CollectiveKind::kReduce || kind == CollectiveKind::kGather ? world_rank == root
                                                                                           : true;
  const std::size_t world = shared->world;
  auto in_buf = std::make_shared<std::unique_ptr<std::byte[]>>(shared->take(wide_in));
  auto out_buf = std::make_shared<std::unique_ptr<std::byte[]>>(in_place ? nullptr : shared->take(wide_out));
  std::size_t count = 0;
  for (const auto& p : ops) count += p.count;
  std::size_t offset = 0;  // elements, within a block
  for (const auto& p : ops) {
    if (sends && wide_in)
      for (std::size_t j = 0; j < world; ++j)
        std::memcpy(in_buf->get() + (j * count + offset) * esize, p.in + j * p.bytes(), p.bytes());
    else if (sends)
      std::memcpy(in_buf->get() + offset * esize, p.in, p.bytes());
    offset += p.count;
  }
  auto pending = std::make_shared<std::vector<FusedOp>>(std::move(ops));
  auto finish = [sh, pending, in_buf, out_buf, esize, count, world, unpack, wide_in, wide_out,
                 in_place](std::exception_ptr error) {
    const std::byte* result = in_place ? in_buf->get() : out_buf->get();
    std::size_t at = 0;  // elements, within a block
    for (auto& p : *pending) {
      if (!error && unpack && wide_out)
        for (std::size_t j = 0; j < world; ++j)
          std::memcpy(p.out + j * p.bytes(), result + (j * count + at) * esize, p.bytes());
      else if (!error && unpack)
        std::memcpy(p.out, result + at * esize, p.bytes());
      at += p.count;
      p.state->complete(error);
    }
    sh->give(std::move(*in_buf), wide_in);
    if (!in_place) sh->give(std::move(*out_buf), wide_out);
    sh->done();
  };
  try {
    issue_one(in_buf->get(), in_place ? in_buf->get() : out_buf->get(), count).on_complete(finish);
  } catch (...) {
    finish(std::current_exception());
  }
}

// Uneven all-to-alls packed: block j of the fused buffers holds every operation's block j for
// rank j, in submission order, at j x C bytes (C: the operations' agreed largest blocks summed,
// at most B, so the world x B wide buffers hold them). (One larger than B ran alone above.)
void Fusion::Impl::issue_uneven(const std::string& target, std::vector<FusedOp> ops) {
  auto sh = shared;
  const std::size_t world = sh->world;
  std::size_t stride = 0;
  for (const auto& p : ops) stride += p.count;
  auto in_buf = std::make_shared<std::unique_ptr<std::byte[]>>(sh->take(true));
  auto out_buf = std::make_shared<std::unique_ptr<std::byte[]>>(sh->take(true));
  Counts send_counts(world, 0), send_displs(world), recv_counts(world, 0), recv_displs(world);
  for (std::size_t j = 0; j < world; ++j) send_displs[j] = recv_displs[j] = j * stride;
  for (const auto& p : ops)
    for (std::size_t j = 0; j < world; ++j) {
      if (p.send_counts[j] > 0)
        std::memcpy(in_buf->get() + j * stride + send_counts[j], p.in + p.send_displs[j], p.send_counts[j]);
      send_counts[j] += p.send_counts[j];
      recv_counts[j] += p.recv_counts[j];
    }
  auto pending = std::make_shared<std::vector<FusedOp>>(std::move(ops));
  auto finish = [sh, pending, in_buf, out_buf, stride, world](std::exception_ptr error) {
    std::vector<std::size_t> at(world, 0);  // bytes, within block j
    for (auto& p : *pending) {
      for (std::size_t j = 0; j < world; ++j) {
        if (!error && p.recv_counts[j] > 0)
          std::memcpy(p.out + p.recv_displs[j], out_buf->get() + j * stride + at[j], p.recv_counts[j]);
        at[j] += p.recv_counts[j];
      }
      p.state->complete(error);
    }
    sh->give(std::move(*in_buf), true);
    sh->give(std::move(*out_buf), true);
    sh->done();
  };
  try {
    rt::all_to_allv(target, in_buf->get(), send_counts, send_displs, out_buf->get(), recv_counts, recv_displs,
                    DType::u8,
                    /*async_op=*/true)
        .on_complete(finish);
  } catch (...) {
    finish(std::current_exception());
  }
}

}  // namespace chorus::rt
