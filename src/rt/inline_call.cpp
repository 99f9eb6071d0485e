#include "rt/inline_call.h"

#include <algorithm>
#include <cstring>

#include "rt/dtype.h"

namespace chorus::rt {

namespace {

using namespace inline_call;

// Where this rank's block for rank j starts (exchange forms), and where rank j's block for it goes.
const char* block_in(const CallSignature& c, int j) {
  const auto k = static_cast<std::size_t>(j);
  if (c.op == CollectiveKind::kAllToAll) return static_cast<const char*>(c.lists->ins[k]);
  return static_cast<const char*>(c.in) + c.lists->send_displs[k] * dtype_bytes(c.dtype);
}
char* block_out(const CallSignature& c, int j) {
  const auto k = static_cast<std::size_t>(j);
  if (c.op == CollectiveKind::kAllToAll) return static_cast<char*>(c.lists->outs[k]);
  return static_cast<char*>(c.out) + c.lists->recv_displs[k] * dtype_bytes(c.dtype);
}

void pack_vector(const CallSignature& c, int n, int me, char* payload) {
  const std::size_t eb = dtype_bytes(c.dtype);
  if (c.op == CollectiveKind::kAllGatherv) {
    if (c.count > 0) std::memcpy(payload, c.in, c.count * eb);
    return;
  }
  std::uint64_t at = static_cast<std::uint64_t>(n) * sizeof(std::uint64_t);
  for (int j = 0; j < n; ++j) {
    std::memcpy(payload + static_cast<std::size_t>(j) * sizeof at, &at, sizeof at);
    const std::size_t len = j == me ? 0 : c.sends[static_cast<std::size_t>(j)] * eb;
    if (len > 0) std::memcpy(payload + at, block_in(c, j), len);
    at += len;
  }
}

// out = the rows' `count` elements at `offset`, reduced in rank order (the same order on every
// rank, so every rank gets the same bits), then averaged for avg.
void reduce_rows(const CallSignature& c, const char* const* rows, int n, std::size_t offset, void* out) {
  const auto at = [&](int j) { return rows[j] + kDigestBytes + offset; };
  if (n == 1)
    std::memcpy(out, at(0), c.count * dtype_bytes(c.dtype));
  else
    reduce_into(c.dtype, c.reduce_op, out, at(0), at(1), c.count);
  for (int j = 2; j < n; ++j) reduce_into(c.dtype, c.reduce_op, out, out, at(j), c.count);
  if (c.reduce_op == ReduceOp::avg) divide_by(c.dtype, out, c.count, n);
}

// Finishes a call that rode inside the exchange, from every rank's row.
void finish_inline(const CallSignature& c, const char* const* rows, int n, int me) {
  const std::size_t block = c.count * dtype_bytes(c.dtype);
  if (block == 0) return;  // nothing to deliver (and the buffers may be null); a barrier is done
  const auto payload = [&](int j) { return rows[j] + kDigestBytes; };
  auto* out = static_cast<char*>(c.out);
  switch (c.op) {
    case CollectiveKind::kBroadcast:
      if (me != c.root) std::memcpy(out, payload(c.root), block);
      break;
    case CollectiveKind::kAllReduce:
      reduce_rows(c, rows, n, 0, out);
      break;
    case CollectiveKind::kReduce:
      if (me == c.root) reduce_rows(c, rows, n, 0, out);
      break;
    case CollectiveKind::kReduceScatter:
      reduce_rows(c, rows, n, block * static_cast<std::size_t>(me), out);
      break;
    case CollectiveKind::kGather:
      if (me != c.root) break;
      [[fallthrough]];
    case CollectiveKind::kAllGather:
      for (int j = 0; j < n; ++j) std::memmove(out + static_cast<std::size_t>(j) * block, payload(j), block);
      break;
    case CollectiveKind::kScatter:
      std::memcpy(out, payload(c.root) + block * static_cast<std::size_t>(me), block);
      break;
    case CollectiveKind::kAllToAllSingle:
      for (int j = 0; j < n; ++j)
        std::memcpy(out + static_cast<std::size_t>(j) * block, payload(j) + block * static_cast<std::size_t>(me),
                    block);
      break;
    default:
      break;  // barrier: the exchange was the barrier
  }
}

// Finishes a vector form that rode inside the exchange, from every rank's row (`capacity`:
// the bytes of data a row has room for). The flow digests agreed, so rank p's block for this
// rank is as long as this rank expects; its offset is checked against the row all the same.
void finish_vector(const Backend& b, const CallSignature& c, const char* const* rows, std::size_t capacity) {
  const int n = b.size(), me = b.rank();
  const std::size_t eb = dtype_bytes(c.dtype);
  const auto payload = [&](int p) { return rows[p] + kDigestBytes; };
  const bool gatherv = c.op == CollectiveKind::kAllGatherv;
  // This rank's own block first: with the buffers in place, the other blocks may land on it.
  const std::size_t own = c.count * eb;
  if (gatherv && own > 0) std::memmove(block_out(c, me), c.in, own);
  if (!gatherv && c.sends[static_cast<std::size_t>(me)] > 0)
    std::memmove(block_out(c, me), block_in(c, me), c.sends[static_cast<std::size_t>(me)] * eb);
  for (int p = 0; p < n; ++p) {
    const std::size_t len = c.expects[static_cast<std::size_t>(p)] * eb;
    if (p == me || len == 0) continue;
    std::uint64_t at = 0;
    if (!gatherv) std::memcpy(&at, payload(p) + static_cast<std::size_t>(me) * sizeof at, sizeof at);
    if (at > capacity || len > capacity - at) [[unlikely]]
      throw_traffic_disagreement(b, c);
    std::memcpy(block_out(c, p), payload(p) + at, len);
  }
}

}  // namespace

bool run_inline(Backend& backend, const AgreementShape& shape, const InlineCall& ride) {
  const CallSignature& mine = *ride.call;
  const int n = shape.ranks, me = shape.rank;
  char* row = agreement_row(shape, ride.used());
  if (ride.contributes && mine.vector_form)
    pack_vector(mine, n, me, row + kDigestBytes);
  else if (ride.contributes)
    std::memcpy(row + kDigestBytes, mine.op == CollectiveKind::kBroadcast ? mine.out : mine.in, ride.payload);
  const char* const* rows = agree(backend, shape, mine, row, ride.used(), mine.vector_form && ride.contributes);
  if (!mine.vector_form) {
    finish_inline(mine, rows, n, me);
    return true;
  }
  for (int p = 0; p < n; ++p)
    if (!row_carries(rows[p])) return false;
  finish_vector(backend, mine, rows, shape.row_bytes - kDigestBytes);
  return true;
}

}  // namespace chorus::rt
