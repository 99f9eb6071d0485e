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

BufferKey key_of(const FusedOp& p) { return {p.op, p.backend, p.dtype, p.reduce_op, p.root}; }

}  // namespace fusion_detail

const Communicator& Fusion::Impl::target(const std::string& name) {
  auto it = targets.find(name);
  if (it == targets.end()) it = targets.emplace(name, runtime->communicator(name)).first;
  return it->second;
}

// Packs the batch, in submission order, into buffers of at most B bytes per BufferKey.
void Fusion::Impl::issue() {
  using fusion_detail::BufferKey;
  std::map<BufferKey, std::pair<std::vector<FusedOp>, std::size_t>> open;  // ops and bytes of each open buffer
  std::vector<BufferKey> order;  // first appearance: buffers are issued in an order every rank shares
  auto close = [&](const BufferKey& key) {
    auto& [ops, bytes] = open[key];
    if (ops.empty()) return;
    std::string backend = std::get<1>(key);
    if (backend == "auto") backend = runtime->resolve_backend("auto", std::get<0>(key), bytes);
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
  const CollectiveKind kind = first.op;
  const OpTraits& t = traits(kind);
  const DType dtype = first.dtype;
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
  // The first operation's Call on other buffers and count: the fused operation. The cycle agreed
  // on every operation it packs (kind, backend and algorithm as named, count, dtype, reduce op,
  // root: its signature) and on B, so every rank packs the same buffer: it is not agreed on
  // again (Call::agreed). It is when its backend was auto, chosen here per buffer from each
  // rank's own tuning table (which could differ between ranks), or when it is an uneven
  // all-to-all, whose counts differ per rank outside the signature.
  auto issue_one = [&](const void* in, void* out, std::size_t count) {
    Call c = first;
    if (kind != CollectiveKind::kAllToAllv) {  // alone only (issue_uneven packs): its own lists
      c.in = kind == CollectiveKind::kBroadcast ? nullptr : in;
      c.out = out;
      c.count = count;
      c.agreed = first.backend != "auto";
    } else {
      c.count = 0;
    }
    return this->target(target).issue(std::move(c), /*async_op=*/true);
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
  const bool wide_in = t.wide_in, wide_out = t.wide_out;
  // The others (all-reduce, broadcast, reduce) run on one fused buffer, in place.
  const bool in_place = !wide_in && !wide_out;
  // What this rank sends and gets back: a broadcast's and a scatter's non-roots send nothing, a
  // broadcast's root gets nothing back, a reduce's and a gather's non-roots get nothing.
  const bool sends =
      kind == CollectiveKind::kBroadcast ? world_rank == root : t.input != Place::kRootOnly || world_rank == root;
  const bool unpack =
      kind == CollectiveKind::kBroadcast ? world_rank != root : t.output != Place::kRootOnly || world_rank == root;
  const std::size_t world = shared->world;
  auto in_buf = std::make_shared<BufferPool::Buffer>(shared->take(wide_in));
  auto out_buf = std::make_shared<BufferPool::Buffer>(in_place ? BufferPool::Buffer() : shared->take(wide_out));
  std::size_t count = 0;
  for (const auto& p : ops) count += p.count;
  std::size_t offset = 0;  // elements, within a block
  for (const auto& p : ops) {
    if (sends && wide_in)
      for (std::size_t j = 0; j < world; ++j)
        std::memcpy(in_buf->get() + (j * count + offset) * esize, p.in_bytes() + j * p.bytes(), p.bytes());
    else if (sends)
      std::memcpy(in_buf->get() + offset * esize, p.in_bytes(), p.bytes());
    offset += p.count;
  }
  auto pending = std::make_shared<std::vector<FusedOp>>(std::move(ops));
  auto finish = [sh, pending, in_buf, out_buf, esize, count, world, unpack, wide_out,
                 in_place](std::exception_ptr error) {
    const std::byte* result = in_place ? in_buf->get() : out_buf->get();
    std::size_t at = 0;  // elements, within a block
    for (auto& p : *pending) {
      if (!error && unpack && wide_out)
        for (std::size_t j = 0; j < world; ++j)
          std::memcpy(p.out_bytes() + j * p.bytes(), result + (j * count + at) * esize, p.bytes());
      else if (!error && unpack)
        std::memcpy(p.out, result + at * esize, p.bytes());
      at += p.count;
      p.state->complete(error);
    }
    in_buf->reset();  // back to the pool
    out_buf->reset();
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
  auto in_buf = std::make_shared<BufferPool::Buffer>(sh->take(true));
  auto out_buf = std::make_shared<BufferPool::Buffer>(sh->take(true));
  Counts send_counts(world, 0), send_displs(world), recv_counts(world, 0), recv_displs(world);
  for (std::size_t j = 0; j < world; ++j) send_displs[j] = recv_displs[j] = j * stride;
  for (const auto& p : ops)
    for (std::size_t j = 0; j < world; ++j) {
      const CallLists& l = *p.lists;  // in bytes
      if (l.send_counts[j] > 0)
        std::memcpy(in_buf->get() + j * stride + send_counts[j], p.in_bytes() + l.send_displs[j], l.send_counts[j]);
      send_counts[j] += l.send_counts[j];
      recv_counts[j] += l.recv_counts[j];
    }
  auto pending = std::make_shared<std::vector<FusedOp>>(std::move(ops));
  auto finish = [sh, pending, in_buf, out_buf, stride, world](std::exception_ptr error) {
    std::vector<std::size_t> at(world, 0);  // bytes, within block j
    for (auto& p : *pending) {
      const CallLists& l = *p.lists;  // in bytes
      for (std::size_t j = 0; j < world; ++j) {
        if (!error && l.recv_counts[j] > 0)
          std::memcpy(p.out_bytes() + l.recv_displs[j], out_buf->get() + j * stride + at[j], l.recv_counts[j]);
        at[j] += l.recv_counts[j];
      }
      p.state->complete(error);
    }
    in_buf->reset();  // back to the pool
    out_buf->reset();
    sh->done();
  };
  try {
    this->target(target)
        .issue(calls::all_to_allv(in_buf->get(), send_counts, send_displs, out_buf->get(), recv_counts, recv_displs,
                                  DType::u8),
               /*async_op=*/true)
        .on_complete(finish);
  } catch (...) {
    finish(std::current_exception());
  }
}

}  // namespace chorus::rt
