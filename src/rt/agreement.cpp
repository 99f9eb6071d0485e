#include "rt/agreement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "rt/backends/agreement.h"
#include "rt/dtype.h"
#include "rt/errors.h"

namespace chorus::rt {

namespace {

// Each row opens with the rank's call signature, and for the forms where ranks send different
// amounts to each other a digest of that traffic: the sum over its sends of h(me, j, count)
// minus the sum over its receives of h(j, me, count). Summed over all ranks it is zero when
// every rank expects from each peer what that peer sends it (each pair's two terms cancel), and
// nonzero, but for a 2^-64 chance, when some pair disagrees. The uniform forms have no such
// traffic: their `flow` is the digest of their compression, compared rank by rank.
struct CallDigest {
  OpSignature signature;
  std::uint64_t flow = 0;
};
static_assert(sizeof(CallDigest) == 32);

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t pair_term(int src, int dst, std::uint64_t count) {
  return mix(mix((static_cast<std::uint64_t>(src) << 32) | static_cast<std::uint32_t>(dst)) ^ count);
}

CallDigest digest(const CallSignature& call, int me) {
  CallDigest d;
  OpSignature& s = d.signature;
  s.sequence = static_cast<std::uint32_t>(call.sequence);
  s.op = call.op;
  s.dtype = call.dtype;
  s.reduce_op = call.reduce_op;
  s.root = call.root;
  s.vector_form = call.vector_form ? 1 : 0;
  s.algorithm = call.algorithm;
  const std::uint64_t eb = dtype_bytes(call.dtype);
  // all_gatherv: this rank's own block, which each peer compares with its counts; the other
  // vector forms: only the traffic digest.
  if (!call.vector_form)
    s.bytes = call.count * eb;
  else if (call.op == CollectiveKind::kAllGatherv && me < static_cast<int>(call.sends.size()))
    s.bytes = call.sends[me] * eb;
  if (!call.vector_form && call.compression != nullptr) d.flow = compression_digest(call.compression);
  for (std::size_t j = 0; j < call.sends.size(); ++j) d.flow += pair_term(me, static_cast<int>(j), call.sends[j]);
  for (std::size_t j = 0; j < call.expects.size(); ++j) d.flow -= pair_term(static_cast<int>(j), me, call.expects[j]);
  return d;
}

constexpr std::size_t kNotInline = std::numeric_limits<std::size_t>::max();

// The bytes per rank of the call's data when it rides inside the exchange, else kNotInline.
// A function of what the ranks agree on (operation, count, dtype, world size), so ranks that
// agree on the call agree on this too; ranks that do not fail on the digests first.
std::size_t inline_bytes(const CallSignature& c, int n, std::size_t capacity) {
  if (!c.may_inline || c.vector_form) return kNotInline;
  const std::size_t block = c.count * dtype_bytes(c.dtype);
  switch (c.op) {
    case CollectiveKind::kBarrier:
      return 0;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduce:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kGather:
      return block <= capacity ? block : kNotInline;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kScatter:
    case CollectiveKind::kAllToAllSingle:  // n blocks
      return block * static_cast<std::size_t>(n) <= capacity ? block * static_cast<std::size_t>(n) : kNotInline;
    default:
      return kNotInline;
  }
}

// The vector forms ride too, but what each rank sends is its own: a rank cannot tell from its
// call whether a peer's data fits. So each rank carries its data when its own fits and says so
// in its digest (kCarries, beside the vector-form flag); the call rides only when every row
// says so, which every rank reads from the same rows. An all-gatherv's row holds the rank's
// block; an all-to-all's (list or v) the offsets of its blocks for each peer, then the blocks.
constexpr std::uint8_t kCarries = 2;  // in OpSignature::vector_form of a digest

// Up to this many bytes of payload: beyond, the two copies through the row cost more than the
// library's own exchange saves (gloo, 2 ranks: BENCHMARKS-history.md, "gloo's vector forms ride").
constexpr std::size_t kVectorRideBytes = 64 << 10;

bool exchange_form(CollectiveKind op) { return op == CollectiveKind::kAllToAll || op == CollectiveKind::kAllToAllv; }

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

// The bytes of this rank's payload for a vector form, or kNotInline (a form that never rides).
std::size_t vector_payload_bytes(const CallSignature& c, int n, int me) {
  if (!c.may_inline || !c.vector_form) return kNotInline;
  const std::size_t eb = dtype_bytes(c.dtype);
  if (c.op == CollectiveKind::kAllGatherv) return c.count * eb;
  if (!exchange_form(c.op)) return kNotInline;
  std::size_t bytes = static_cast<std::size_t>(n) * sizeof(std::uint64_t);
  for (int j = 0; j < n; ++j)
    if (j != me) bytes += c.sends[static_cast<std::size_t>(j)] * eb;
  return bytes;
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
  const auto at = [&](int j) { return rows[j] + sizeof(CallDigest) + offset; };
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
  const auto payload = [&](int j) { return rows[j] + sizeof(CallDigest); };
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

[[noreturn, gnu::cold, gnu::noinline]] void throw_compression_disagreement(const Backend& b, const CallSignature& mine,
                                                                           const OpSignature& s, int peer) {
  throw DisagreementError(fmt::format("{} {} on rank {}: ranks disagree: rank {} called {}, {}; rank {} not so ({})",
                                      b.name(), to_string(s.op), b.rank(), b.rank(), describe(s),
                                      describe_compression(mine.compression), peer,
                                      mine.compression == nullptr ? "compressed" : "plain or under another bound"));
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_traffic_disagreement(const Backend& b, const OpSignature& mine) {
  throw DisagreementError(
      fmt::format("{} {} on rank {}: ranks disagree: in {}, some rank sends a peer a number of elements "
                  "other than the peer expects from it (run with CHORUS_RT_CHECK=1 to name them)",
                  b.name(), to_string(mine.op), b.rank(), describe(mine)));
}

// Finishes a vector form that rode inside the exchange, from every rank's row (`capacity`:
// the bytes of data a row has room for). The flow digests agreed, so rank p's block for this
// rank is as long as this rank expects; its offset is checked against the row all the same.
void finish_vector(const Backend& b, const CallSignature& c, const OpSignature& s, const char* const* rows,
                   std::size_t capacity) {
  const int n = b.size(), me = b.rank();
  const std::size_t eb = dtype_bytes(c.dtype);
  const auto payload = [&](int p) { return rows[p] + sizeof(CallDigest); };
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
      throw_traffic_disagreement(b, s);
    std::memcpy(block_out(c, p), payload(p) + at, len);
  }
}

// The rows of a backend without buffers of its own (gloo and mpi beyond 8 ranks), kept per thread:
// this rank's row, every rank's, and where each starts, made again only when the shape changes.
// The row is sent whole: what a call leaves unused is zero, not an earlier call's data.
struct OwnRows {
  std::vector<char> row, all;
  std::vector<const char*> starts;
  std::size_t dirty = 0;  // bytes of `row` the last call wrote

  char* row_for(std::size_t row_bytes, int n, std::size_t used) {
    const auto ranks = static_cast<std::size_t>(n);
    if (row.size() != row_bytes || starts.size() != ranks) {
      row.assign(row_bytes, 0);
      all.resize(row_bytes * ranks);
      starts.resize(ranks);
      for (std::size_t p = 0; p < ranks; ++p) starts[p] = all.data() + p * row_bytes;
      dirty = 0;
    }
    if (dirty > used) std::memset(row.data() + used, 0, dirty - used);
    dirty = used;
    return row.data();
  }
};

}  // namespace

std::size_t agreement_row_bytes(const Backend& backend) {
  return sizeof(CallDigest) + backend.agreement_inline_bytes();
}

AgreementShape agreement_shape(Backend& backend) {
  return {backend.size(), backend.rank(), agreement_row_bytes(backend), backend.agreement_row()};
}

bool agree(Backend& backend, const AgreementShape& shape, const CallSignature& mine) {
  const int n = shape.ranks, me = shape.rank;
  const std::size_t row_bytes = shape.row_bytes, capacity = row_bytes - sizeof(CallDigest);
  CallDigest d = digest(mine, me);
  const std::size_t carried = inline_bytes(mine, n, capacity);
  const std::size_t vector_payload = mine.vector_form ? vector_payload_bytes(mine, n, me) : kNotInline;
  const bool carries_vector = mine.vector_form && vector_payload <= std::min(capacity, kVectorRideBytes);
  // What this rank contributes to the rows: its input (a broadcast's or scatter's root only).
  const bool rooted = mine.op == CollectiveKind::kBroadcast || mine.op == CollectiveKind::kScatter;
  const bool contributes = carried != kNotInline && carried > 0 && (!rooted || me == mine.root);
  const std::size_t used = sizeof d + (contributes ? carried : carries_vector ? vector_payload : 0);
  // This rank's row: the backend's own (sent in place, only the part in use), else one kept per
  // thread, with every rank's (this runs before every collective).
  thread_local OwnRows own;
  char* row = shape.row;
  const bool own_buffers = row == nullptr;
  if (own_buffers) row = own.row_for(row_bytes, n, used);
  if (carries_vector) d.signature.vector_form |= kCarries;
  std::memcpy(row, &d, sizeof d);
  d.signature.vector_form &= static_cast<std::uint8_t>(~kCarries);
  if (contributes) std::memcpy(row + sizeof d, mine.op == CollectiveKind::kBroadcast ? mine.out : mine.in, carried);
  if (carries_vector) pack_vector(mine, n, me, row + sizeof d);
  const char* const* rows = nullptr;
  if (own_buffers) {
    backend.agreement_all_gather(row, own.all.data(), row_bytes);
    rows = own.starts.data();
  } else {
    rows = backend.agreement_exchange(used);
  }
  const std::uint64_t eb = dtype_bytes(mine.dtype);
  std::uint64_t flow = 0;
  bool all_carry = true;
  // Every rank sees every row, so ranks that disagree all throw (the traffic digest is summed
  // over all rows). A rank whose program then ends at once could close its connections under a
  // slower peer still reading the rows, which would report that rank dead rather than the
  // disagreement: one barrier first (its failure ignored), after which every rank has its rows.
  const auto settled = [&backend] {
    try {
      backend.barrier();
    } catch (...) {  // a peer gone already: this rank has its rows, and says what they show
    }
  };
  for (int p = 0; p < n; ++p) {
    CallDigest theirs;
    std::memcpy(&theirs, rows[p], sizeof theirs);
    if (mine.vector_form) {
      all_carry = all_carry && (theirs.signature.vector_form & kCarries) != 0;
      theirs.signature.vector_form &= static_cast<std::uint8_t>(~kCarries);
      flow += theirs.flow;
    }
    if (p == me) continue;
    const std::uint64_t expected = mine.op == CollectiveKind::kAllGatherv && p < static_cast<int>(mine.expects.size())
                                       ? mine.expects[p] * eb
                                       : d.signature.bytes;
    // A compressed call against a plain one (or under another bound) first: they also differ in
    // their algorithm, but the bound says more.
    if (!mine.vector_form && theirs.signature.vector_form == 0 && theirs.flow != d.flow) [[unlikely]] {
      settled();
      throw_compression_disagreement(backend, mine, d.signature, p);
    }
    if (!agrees(d.signature, theirs.signature, expected)) [[unlikely]] {
      settled();
      throw_disagreement(backend.name(), to_string(mine.op), me, d.signature, p, theirs.signature,
                         [&backend](CollectiveKind op, std::uint16_t a) { return describe_algorithm(backend, op, a); });
    }
  }
  if (flow != 0) [[unlikely]] {
    settled();
    throw_traffic_disagreement(backend, d.signature);
  }
  if (mine.vector_form) {
    if (!all_carry) return false;
    finish_vector(backend, mine, d.signature, rows, capacity);
    return true;
  }
  if (carried == kNotInline) return false;
  finish_inline(mine, rows, n, me);
  return true;
}

}  // namespace chorus::rt
