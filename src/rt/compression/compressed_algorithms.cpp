// The compressed forms of the operations, on a backend; see compressed_algorithms.h and, for
// the guarantees, compressed.h.
#include "rt/compression/compressed_algorithms.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "rt/compression/call_compression.h"
#include "rt/errors.h"

namespace chorus::rt::compressed {
namespace {

constexpr std::uint64_t kSizeMessageBytes = sizeof(std::int64_t);

// A block size announced by a peer, checked before anything is allocated for it.
std::size_t checked_block_size(std::int64_t announced, std::size_t count, DType dtype, int peer) {
  const std::size_t limit = max_block_bytes(count, dtype);
  if (announced < static_cast<std::int64_t>(kBlockHeaderBytes) || static_cast<std::uint64_t>(announced) > limit ||
      announced % 8 != 0)
    throw CommError(fmt::format("rank {} announced a compressed block of {} bytes for {} elements of {} (at most {})",
                                peer, announced, count, rt::to_string(dtype), limit));
  return static_cast<std::size_t>(announced);
}

// Block b of a count split over p ranks: the first count % p blocks are one element longer.
std::size_t block_start(std::size_t count, std::size_t p, std::size_t b) {
  return b * (count / p) + std::min(b, count % p);
}
std::size_t block_len(std::size_t count, std::size_t p, std::size_t b) { return count / p + (b < count % p ? 1 : 0); }

// One hop of the ring: `block` (if has_send) to dst, a block of recv_count elements (if > 0)
// from src into `received`, each announced by its size. A rank that only sends or only
// receives cannot close a cycle of waits: the rank it sends to receives that block.
void ring_hop(Backend& b, const std::vector<std::uint8_t>& block, bool has_send, int dst, std::size_t recv_count,
              DType dtype, std::vector<std::uint8_t>& received, int src) {
  const auto out_size = static_cast<std::int64_t>(block.size());
  std::int64_t in_size = 0;
  if (has_send && recv_count > 0) {
    b.send_recv(&out_size, sizeof out_size, dst, &in_size, sizeof in_size, src);
    received.resize(checked_block_size(in_size, recv_count, dtype, src));
    b.send_recv(block.data(), block.size(), dst, received.data(), received.size(), src);
  } else if (has_send) {
    b.send(&out_size, sizeof out_size, dst);
    b.send(block.data(), block.size(), dst);
  } else if (recv_count > 0) {
    b.recv(&in_size, sizeof in_size, src);
    received.resize(checked_block_size(in_size, recv_count, dtype, src));
    b.recv(received.data(), received.size(), src);
  }
}

// Every rank's compressed block (`mine` from this rank) gathered, then decoded into block j of
// `out` (`len(j)` elements at `start(j)`) for every other rank j. Returns the bytes this rank sent.
template <typename Start, typename Len>
std::uint64_t gather_blocks(Backend& b, const std::vector<std::uint8_t>& mine, void* out, DType dtype,
                            const ErrorBound& bound, const Start& start, const Len& len) {
  const auto P = static_cast<std::size_t>(b.size());
  const auto self = static_cast<std::size_t>(b.rank());
  const std::size_t eb = dtype_bytes(dtype);
  const auto my_size = static_cast<std::int64_t>(mine.size());
  std::vector<std::int64_t> sizes(P);
  b.run(calls::all_gather(&my_size, sizes.data(), 1, DType::i64), ReduceOp::sum);
  Counts counts(P), displs(P);
  std::size_t total = 0;
  for (std::size_t j = 0; j < P; ++j) {
    if (len(j) == 0 && sizes[j] != 0)
      throw CommError(fmt::format("rank {} announced {} bytes for an empty block", j, sizes[j]));
    counts[j] = len(j) == 0 ? 0 : checked_block_size(sizes[j], len(j), dtype, static_cast<int>(j));
    displs[j] = total;
    total += counts[j];
  }
  std::vector<std::uint8_t> gathered(total);
  b.run(calls::all_gatherv(mine.data(), mine.size(), gathered.data(), counts, displs, DType::u8), ReduceOp::sum);
  for (std::size_t j = 0; j < P; ++j)
    if (counts[j] > 0 && j != self)
      decompress(gathered.data() + displs[j], counts[j], static_cast<std::uint8_t*>(out) + start(j) * eb, len(j), dtype,
                 bound);
  return kSizeMessageBytes + mine.size();
}

Stats all_gather(Backend& b, const Call& c, const ErrorBound& bound) {
  const std::size_t bytes = c.bytes();
  auto* o = static_cast<std::uint8_t*>(c.out);
  // The own block decoded by the codec itself: bitwise what the other ranks decode. `in` may
  // lie inside out (the codec handles the overlap); it is not read afterwards.
  std::vector<std::uint8_t> mine;
  compress(c.in, c.count, c.dtype, bound, mine, o + static_cast<std::size_t>(b.rank()) * bytes);
  const std::uint64_t wire = gather_blocks(
      b, mine, c.out, c.dtype, bound, [&](std::size_t j) { return j * c.count; }, [&](std::size_t) { return c.count; });
  return {bytes, wire};
}

Stats all_to_all_single(Backend& b, const Call& c, const ErrorBound& bound) {
  const std::size_t bytes = c.bytes();
  const auto P = static_cast<std::size_t>(b.size()), self = static_cast<std::size_t>(b.rank());
  const auto* src = static_cast<const std::uint8_t*>(c.in);
  auto* o = static_cast<std::uint8_t*>(c.out);
  std::vector<std::uint8_t> packed;
  Counts send_counts(P, 0), send_displs(P, 0);
  std::vector<std::int64_t> send_sizes(P, 0), recv_sizes(P, 0);
  for (std::size_t j = 0; j < P; ++j) {
    if (j == self) continue;  // the own block is copied exactly, not sent
    send_displs[j] = packed.size();
    send_counts[j] = compress(src + j * bytes, c.count, c.dtype, bound, packed);
    send_sizes[j] = static_cast<std::int64_t>(send_counts[j]);
  }
  b.run(calls::all_to_all_single(send_sizes.data(), recv_sizes.data(), 1, DType::i64), ReduceOp::sum);
  Counts recv_counts(P, 0), recv_displs(P, 0);
  std::size_t total = 0;
  for (std::size_t j = 0; j < P; ++j) {
    if (j != self) recv_counts[j] = checked_block_size(recv_sizes[j], c.count, c.dtype, static_cast<int>(j));
    recv_displs[j] = total;
    total += recv_counts[j];
  }
  std::vector<std::uint8_t> received(total);
  b.run(
      calls::all_to_allv(packed.data(), send_counts, send_displs, received.data(), recv_counts, recv_displs, DType::u8),
      ReduceOp::sum);
  std::memmove(o + self * bytes, src + self * bytes, bytes);  // in == out: the same place
  for (std::size_t j = 0; j < P; ++j)
    if (j != self) decompress(received.data() + recv_displs[j], recv_counts[j], o + j * bytes, c.count, c.dtype, bound);
  return {(P - 1) * bytes, (P - 1) * kSizeMessageBytes + packed.size()};
}

Stats send(Backend& b, const Call& c, const ErrorBound& bound) {
  std::vector<std::uint8_t> block;
  compress(c.in, c.count, c.dtype, bound, block);
  const auto size = static_cast<std::int64_t>(block.size());
  b.run(calls::send(&size, sizeof size, DType::u8, c.peer), ReduceOp::sum);
  b.run(calls::send(block.data(), block.size(), DType::u8, c.peer), ReduceOp::sum);
  return {c.bytes(), kSizeMessageBytes + block.size()};
}

Stats recv(Backend& b, const Call& c, const ErrorBound& bound) {
  std::int64_t size = 0;
  b.run(calls::recv(&size, sizeof size, DType::u8, c.peer), ReduceOp::sum);
  std::vector<std::uint8_t> block(checked_block_size(size, c.count, c.dtype, c.peer));
  b.run(calls::recv(block.data(), block.size(), DType::u8, c.peer), ReduceOp::sum);
  decompress(block.data(), block.size(), c.out, c.count, c.dtype, bound);
  return {};  // a receive sends nothing
}

template <typename T>
Stats ring_all_reduce(Backend& b, const T* in, T* out, std::size_t count, DType dtype, ReduceOp op,
                      const ErrorBound& per_hop) {
  const int p = b.size(), me = b.rank();
  const auto P = static_cast<std::size_t>(p);
  const auto mod = [p](int x) { return static_cast<std::size_t>(((x % p) + p) % p); };
  const int right = (me + 1) % p, left = (me + p - 1) % p;
  Stats st;
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
      st.raw_bytes += send_len * sizeof(T);
      st.wire_bytes += kSizeMessageBytes + sendbuf.size();
    }
    ring_hop(b, sendbuf, send_len > 0, right, recv_len, dtype, recvbuf, left);
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
  st.wire_bytes += gather_blocks(
      b, mine, out, dtype, per_hop, [&](std::size_t j) { return block_start(count, P, j); },
      [&](std::size_t j) { return block_len(count, P, j); });
  st.raw_bytes += my_len * sizeof(T);
  if (op == ReduceOp::avg) {
    const T divisor = static_cast<T>(p);
    for (std::size_t i = 0; i < count; ++i) out[i] /= divisor;
  }
  return st;
}

Stats all_reduce(Backend& b, const Call& c, const ErrorBound& bound) {
  // p - 1 compressions in the ring plus one in the all-gather: bound / p each.
  ErrorBound per_hop = bound;
  if (bound.kind == ErrorBound::Kind::kAbsolute)
    per_hop.value = std::max(bound.value / b.size(), std::numeric_limits<double>::denorm_min());
  if (c.dtype == DType::f32)
    return ring_all_reduce(b, static_cast<const float*>(c.in), static_cast<float*>(c.out), c.count, c.dtype,
                           c.reduce_op, per_hop);
  return ring_all_reduce(b, static_cast<const double*>(c.in), static_cast<double*>(c.out), c.count, c.dtype,
                         c.reduce_op, per_hop);
}

}  // namespace

void check(const Call& call) {
  const std::string where = fmt::format("compressed::{}", to_string(call.op));
  if (!has_compressed_form(call.op))
    throw InputError(where, "has no compressed form: only all_reduce, all_gather, all_to_all_single, send and recv");
  if (!compressible(call.dtype))
    throw InputError(where, fmt::format("dtype {} cannot be compressed: only f32 and f64", rt::to_string(call.dtype)));
  validate_bound(call.compression->bound, call.dtype, where + " bound");
  if (call.op == CollectiveKind::kAllReduce && call.reduce_op != ReduceOp::sum && call.reduce_op != ReduceOp::avg)
    throw InputError(where + " op",
                     fmt::format("reduce op {} is not supported: only sum and avg", rt::to_string(call.reduce_op)));
}

void run(Backend& backend, const Call& call) {
  if (call.count == 0) return;
  const bool p2p = call.op == CollectiveKind::kSend || call.op == CollectiveKind::kRecv;
  if (backend.size() == 1 && !p2p) {  // a world of one: the result is the input
    if (call.in != call.out) std::memmove(call.out, call.in, call.bytes());
    return;
  }
  const CallCompression& z = *call.compression;
  Stats st;
  switch (call.op) {
    case CollectiveKind::kAllReduce:
      st = all_reduce(backend, call, z.bound);
      break;
    case CollectiveKind::kAllGather:
      st = all_gather(backend, call, z.bound);
      break;
    case CollectiveKind::kAllToAllSingle:
      st = all_to_all_single(backend, call, z.bound);
      break;
    case CollectiveKind::kSend:
      st = send(backend, call, z.bound);
      break;
    case CollectiveKind::kRecv:
      st = recv(backend, call, z.bound);
      break;
    default:
      check(call);  // throws: no compressed form
  }
  if (z.stats != nullptr) *z.stats += st;
  if (z.totals != nullptr) z.totals->add(st);
}

}  // namespace chorus::rt::compressed
