// Compressed collectives on the public runtime API; see compressed.h for the guarantees.
#include "rt/compression/compressed.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "rt/errors.h"
#include "rt/runtime.h"

namespace chorus::rt::compressed {
namespace {

constexpr std::uint64_t kSizeMessageBytes = sizeof(std::int64_t);

// Validates dtype and bound before any communication (every rank throws alike).
void check_args(std::string_view op, DType dtype, const ErrorBound& bound) {
  const std::string where = fmt::format("compressed::{}", op);
  if (!compressible(dtype))
    throw InputError(where, fmt::format("dtype {} cannot be compressed: only f32 and f64", rt::to_string(dtype)));
  validate_bound(bound, dtype, where + " bound");
}

// "auto" resolved once, so all messages of one compressed operation use one backend; every
// rank resolves alike (same operation kind and size everywhere).
std::string resolve(std::string_view backend, CollectiveKind op, std::size_t bytes) {
  return backend == "auto" ? rt::resolve_backend(backend, op, bytes) : std::string(backend);
}

// What needs no communication, done here: count 0, or a world of one (the result is a copy of
// the input). True when the operation is complete.
bool without_communication(int p, const void* in, void* out, std::size_t count, DType dtype) {
  if (count == 0) return true;
  if (p > 1) return false;
  std::memmove(out, in, count * dtype_bytes(dtype));
  return true;
}

void account(Stats* stats, std::uint64_t raw, std::uint64_t wire) {
  if (stats == nullptr) return;
  stats->raw_bytes += raw;
  stats->wire_bytes += wire;
}

// A block size announced by a peer, checked before anything is allocated for it.
std::size_t checked_block_size(std::int64_t announced, std::size_t count, DType dtype, int peer) {
  const std::size_t limit = max_block_bytes(count, dtype);
  if (announced < static_cast<std::int64_t>(kBlockHeaderBytes) || static_cast<std::uint64_t>(announced) > limit ||
      announced % 8 != 0)
    throw CommError(fmt::format("rank {} announced a compressed block of {} bytes for {} elements of {} (at most {})",
                                peer, announced, count, rt::to_string(dtype), limit));
  return static_cast<std::size_t>(announced);
}

// Waits for asynchronous operations whose buffers live in this scope, also when unwinding.
class PendingWork {
 public:
  PendingWork() = default;
  PendingWork(const PendingWork&) = delete;
  PendingWork& operator=(const PendingWork&) = delete;
  ~PendingWork() {
    for (auto& w : works_) {
      try {
        w.wait();
      } catch (...) {  // the first error is already propagating
      }
    }
  }
  void add(Work w) { works_.push_back(std::move(w)); }
  void wait_all() {
    std::vector<Work> works;
    works.swap(works_);
    std::exception_ptr first;
    for (auto& w : works) {
      try {
        w.wait();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  }

 private:
  std::vector<Work> works_;
};

// One hop of the ring: `block` (if has_send) to dst, a block of recv_count elements (if > 0)
// from src into `received`. Each message is a size, then the bytes. Even ranks send first,
// odd ranks receive first: deadlock-free also on a backend that runs a rank's sends and
// receives one at a time (MPI without MPI_THREAD_MULTIPLE); with concurrent point-to-point
// lanes the sends and the payload receive overlap.
void ring_hop(std::string_view backend, int me, const std::vector<std::uint8_t>& block, bool has_send, int dst,
              std::size_t recv_count, DType dtype, std::vector<std::uint8_t>& received, int src) {
  PendingWork pending;
  const std::int64_t out_size = static_cast<std::int64_t>(block.size());
  std::int64_t in_size = 0;
  auto post_sends = [&] {
    if (!has_send) return;
    pending.add(rt::send(backend, &out_size, 1, DType::i64, dst, true));
    pending.add(rt::send(backend, block.data(), block.size(), DType::u8, dst, true));
  };
  auto post_receive = [&] {
    if (recv_count == 0) return;
    rt::recv(backend, &in_size, 1, DType::i64, src);
    received.resize(checked_block_size(in_size, recv_count, dtype, src));
    pending.add(rt::recv(backend, received.data(), received.size(), DType::u8, src, true));
  };
  if (me % 2 == 0) {
    post_sends();
    post_receive();
  } else {
    post_receive();
    post_sends();
  }
  pending.wait_all();
}

// Block b of a count split over p ranks: the first count % p blocks are one element longer.
std::size_t block_start(std::size_t count, std::size_t p, std::size_t b) {
  return b * (count / p) + std::min(b, count % p);
}
std::size_t block_len(std::size_t count, std::size_t p, std::size_t b) { return count / p + (b < count % p ? 1 : 0); }

template <typename T>
void ring_all_reduce(std::string_view backend, const T* in, T* out, std::size_t count, DType dtype, ReduceOp op,
                     const ErrorBound& per_hop, int me, int p, Stats* stats) {
  const auto P = static_cast<std::size_t>(p);
  const auto mod = [p](int x) { return static_cast<std::size_t>(((x % p) + p) % p); };
  const int right = (me + 1) % p, left = (me + p - 1) % p;
  std::uint64_t raw = 0, wire = 0;
  std::vector<T> partial;  // the running partial sum of the block received last
  std::vector<std::uint8_t> sendbuf, recvbuf;
  // Reduce-scatter: in step s this rank sends its partial of block me-s-1 (its own data at
  // s = 0) to the right and receives block me-s-2 from the left, to which it adds its own
  // contribution; after p-1 steps it holds block me summed over all ranks.
  for (int s = 0; s + 1 < p; ++s) {
    const std::size_t sb = mod(me - s - 1), rb = mod(me - s - 2);
    const std::size_t send_len = block_len(count, P, sb), recv_len = block_len(count, P, rb);
    sendbuf.clear();
    if (send_len > 0) {
      compress(s == 0 ? in + block_start(count, P, sb) : partial.data(), send_len, dtype, per_hop, sendbuf);
      raw += send_len * sizeof(T);
      wire += kSizeMessageBytes + sendbuf.size();
    }
    ring_hop(backend, me, sendbuf, send_len > 0, right, recv_len, dtype, recvbuf, left);
    partial.resize(recv_len);
    if (recv_len == 0) continue;
    decompress(recvbuf.data(), recvbuf.size(), partial.data(), recv_len, dtype, per_hop);
    const T* own = in + block_start(count, P, rb);
    for (std::size_t i = 0; i < recv_len; ++i) partial[i] += own[i];
  }
  // All-gather: each reduced block compressed once by its owner; every rank (the owner too)
  // decodes the same bytes, so the result is bitwise equal everywhere. `in` is no longer read
  // (in == out is fine).
  const std::size_t my_len = block_len(count, P, static_cast<std::size_t>(me));
  std::vector<std::uint8_t> mine;
  T* my_out = out + block_start(count, P, static_cast<std::size_t>(me));
  if (my_len > 0) compress(partial.data(), my_len, dtype, per_hop, mine, my_out);  // decoded as all decode it
  std::int64_t my_size = static_cast<std::int64_t>(mine.size());
  std::vector<std::int64_t> sizes(P);
  rt::all_gather(backend, &my_size, sizes.data(), 1, DType::i64);
  Counts counts(P), displs(P);
  std::size_t total = 0;
  for (std::size_t j = 0; j < P; ++j) {
    const std::size_t len = block_len(count, P, j);
    if (len == 0 && sizes[j] != 0)
      throw CommError(fmt::format("rank {} announced {} bytes for an empty block", j, sizes[j]));
    counts[j] = len == 0 ? 0 : checked_block_size(sizes[j], len, dtype, static_cast<int>(j));
    displs[j] = total;
    total += counts[j];
  }
  std::vector<std::uint8_t> gathered(total);
  rt::all_gatherv(backend, mine.data(), mine.size(), gathered.data(), counts, displs, DType::u8);
  for (std::size_t j = 0; j < P; ++j)
    if (counts[j] > 0 && j != static_cast<std::size_t>(me))
      decompress(gathered.data() + displs[j], counts[j], out + block_start(count, P, j), block_len(count, P, j), dtype,
                 per_hop);
  if (op == ReduceOp::avg) {
    const T divisor = static_cast<T>(p);
    for (std::size_t i = 0; i < count; ++i) out[i] /= divisor;
  }
  raw += my_len * sizeof(T);
  wire += kSizeMessageBytes + mine.size();
  account(stats, raw, wire);
}

}  // namespace

void all_gather(std::string_view backend_name, const void* in, void* out, std::size_t count, DType dtype,
                const ErrorBound& bound, Stats* stats) {
  check_args("all_gather", dtype, bound);
  const std::string backend = resolve(backend_name, CollectiveKind::kAllGather, count * dtype_bytes(dtype));
  const int p = rt::size(backend);
  if (without_communication(p, in, out, count, dtype)) return;
  const std::size_t bytes = count * dtype_bytes(dtype);
  const auto P = static_cast<std::size_t>(p);
  const int me = rt::rank(backend);
  const auto self = static_cast<std::size_t>(me);
  auto* o = static_cast<std::uint8_t*>(out);
  // The own block decoded by the codec itself: bitwise what the other ranks decode. `in` may
  // lie inside out (the codec handles the overlap); it is not read afterwards.
  std::vector<std::uint8_t> mine;
  compress(in, count, dtype, bound, mine, o + self * bytes);
  std::int64_t my_size = static_cast<std::int64_t>(mine.size());
  std::vector<std::int64_t> sizes(P);
  rt::all_gather(backend, &my_size, sizes.data(), 1, DType::i64);
  Counts counts(P), displs(P);
  std::size_t total = 0;
  for (std::size_t j = 0; j < P; ++j) {
    counts[j] = checked_block_size(sizes[j], count, dtype, static_cast<int>(j));
    displs[j] = total;
    total += counts[j];
  }
  std::vector<std::uint8_t> gathered(total);
  rt::all_gatherv(backend, mine.data(), mine.size(), gathered.data(), counts, displs, DType::u8);
  for (std::size_t j = 0; j < P; ++j)
    if (j != self) decompress(gathered.data() + displs[j], counts[j], o + j * bytes, count, dtype, bound);
  account(stats, bytes, kSizeMessageBytes + mine.size());
}

void all_to_all_single(std::string_view backend_name, const void* in, void* out, std::size_t count, DType dtype,
                       const ErrorBound& bound, Stats* stats) {
  check_args("all_to_all_single", dtype, bound);
  const std::string backend = resolve(backend_name, CollectiveKind::kAllToAllSingle, count * dtype_bytes(dtype));
  const int p = rt::size(backend);
  if (without_communication(p, in, out, count, dtype)) return;
  const std::size_t bytes = count * dtype_bytes(dtype);
  const int me = rt::rank(backend);
  const auto P = static_cast<std::size_t>(p), self = static_cast<std::size_t>(me);
  const auto* src = static_cast<const std::uint8_t*>(in);
  auto* o = static_cast<std::uint8_t*>(out);
  std::vector<std::uint8_t> packed;
  Counts send_counts(P, 0), send_displs(P, 0);
  std::vector<std::int64_t> send_sizes(P, 0), recv_sizes(P, 0);
  for (std::size_t j = 0; j < P; ++j) {
    if (j == self) continue;  // the own block is copied exactly, not sent
    send_displs[j] = packed.size();
    send_counts[j] = compress(src + j * bytes, count, dtype, bound, packed);
    send_sizes[j] = static_cast<std::int64_t>(send_counts[j]);
  }
  rt::all_to_all_single(backend, send_sizes.data(), recv_sizes.data(), 1, DType::i64);
  Counts recv_counts(P, 0), recv_displs(P, 0);
  std::size_t total = 0;
  for (std::size_t j = 0; j < P; ++j) {
    if (j != self) recv_counts[j] = checked_block_size(recv_sizes[j], count, dtype, static_cast<int>(j));
    recv_displs[j] = total;
    total += recv_counts[j];
  }
  std::vector<std::uint8_t> received(total);
  rt::all_to_allv(backend, packed.data(), send_counts, send_displs, received.data(), recv_counts, recv_displs,
                  DType::u8);
  std::memmove(o + self * bytes, src + self * bytes, bytes);  // in == out: the same place
  for (std::size_t j = 0; j < P; ++j)
    if (j != self) decompress(received.data() + recv_displs[j], recv_counts[j], o + j * bytes, count, dtype, bound);
  account(stats, (P - 1) * bytes, (P - 1) * kSizeMessageBytes + packed.size());
}

void send(std::string_view backend_name, const void* buf, std::size_t count, DType dtype, int dst,
          const ErrorBound& bound, Stats* stats) {
  check_args("send", dtype, bound);
  const std::string backend = resolve(backend_name, CollectiveKind::kSend, count * dtype_bytes(dtype));
  if (count == 0) return;
  std::vector<std::uint8_t> block;
  compress(buf, count, dtype, bound, block);
  const std::int64_t size = static_cast<std::int64_t>(block.size());
  rt::send(backend, &size, 1, DType::i64, dst);
  rt::send(backend, block.data(), block.size(), DType::u8, dst);
  account(stats, count * dtype_bytes(dtype), kSizeMessageBytes + block.size());
}

void recv(std::string_view backend_name, void* buf, std::size_t count, DType dtype, int src, const ErrorBound& bound,
          Stats* /*stats: a receive sends nothing*/) {
  check_args("recv", dtype, bound);
  const std::string backend = resolve(backend_name, CollectiveKind::kSend, count * dtype_bytes(dtype));
  if (count == 0) return;
  std::int64_t size = 0;
  rt::recv(backend, &size, 1, DType::i64, src);
  std::vector<std::uint8_t> block(checked_block_size(size, count, dtype, src));
  rt::recv(backend, block.data(), block.size(), DType::u8, src);
  decompress(block.data(), block.size(), buf, count, dtype, bound);
}

void all_reduce(std::string_view backend_name, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                const ErrorBound& bound, Stats* stats) {
  check_args("all_reduce", dtype, bound);
  if (op != ReduceOp::sum && op != ReduceOp::avg)
    throw InputError("compressed::all_reduce op",
                     fmt::format("reduce op {} is not supported: only sum and avg", rt::to_string(op)));
  // The ring is a reduce-scatter (then an all-gather) of blocks of about count / p elements.
  const auto world = static_cast<std::size_t>(rt::size(backend_name));
  const std::string backend = resolve(backend_name, CollectiveKind::kReduceScatter, count / world * dtype_bytes(dtype));
  const int p = rt::size(backend);
  if (without_communication(p, in, out, count, dtype)) return;  // one rank's sum and average: itself
  const int me = rt::rank(backend);
  // p - 1 compressions in the ring plus one in the all-gather: bound / p each.
  ErrorBound per_hop = bound;
  if (bound.kind == ErrorBound::Kind::kAbsolute)
    per_hop.value = std::max(bound.value / p, std::numeric_limits<double>::denorm_min());
  if (dtype == DType::f32)
    ring_all_reduce(backend, static_cast<const float*>(in), static_cast<float*>(out), count, dtype, op, per_hop, me, p,
                    stats);
  else
    ring_all_reduce(backend, static_cast<const double*>(in), static_cast<double*>(out), count, dtype, op, per_hop, me,
                    p, stats);
}

}  // namespace chorus::rt::compressed
