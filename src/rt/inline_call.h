#pragma once
// Small calls carried inside the agreement exchange (agreement.h). A collective whose data fits
// in the room a row leaves after its digest (at most Backend::agreement_inline_bytes() per rank,
// the backend's own algorithm) rides inside the exchange and is finished locally from the rows
// (an all-reduce reduces the n rows in rank order, a broadcast copies the root's ...), so the
// agreement costs such calls nothing: the exchange is the operation. Larger calls agree on their
// digest alone and then run on the backend.
//
// Whether a uniform call rides is a function of what the ranks agree on (operation, count,
// dtype, world size), so ranks that agree on the call agree on this too; ranks that do not fail
// on the digests first. What each rank sends in a vector form is its own, so there each rank
// carries its data when its own fits and says so in its digest (kRowCarries); the call rides
// only when every row says so, which every rank reads from the same rows.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "rt/agreement.h"
#include "rt/dtype.h"

namespace chorus::rt {

// One call's plan for the exchange: what this rank's row carries after the digest.
struct InlineCall {
  const CallSignature* call = nullptr;
  std::size_t payload = 0;   // bytes of this rank's data in its row
  bool rides = false;        // the call rides (a vector form: if every rank's row carries too)
  bool contributes = false;  // this rank's data is in its row (a root's only, when rooted)

  // The bytes of the row in use, digest included.
  std::size_t used() const { return kDigestBytes + (contributes ? payload : 0); }
};

// What plan_inline decides by (inline: it runs before every collective).
namespace inline_call {
inline constexpr std::size_t kNotInline = std::numeric_limits<std::size_t>::max();

// The bytes per rank of the call's data when it rides inside the exchange, else kNotInline.
// A function of what the ranks agree on (operation, count, dtype, world size), so ranks that
// agree on the call agree on this too; ranks that do not fail on the digests first.
inline std::size_t inline_bytes(const CallSignature& c, int n, std::size_t capacity) {
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

// The vector forms' rows: an all-gatherv's holds the rank's block; an all-to-all's (list or v)
// the offsets of its blocks for each peer, then the blocks.
// Up to this many bytes of payload: beyond, the two copies through the row cost more than the
// library's own exchange saves (gloo, 2 ranks: BENCHMARKS-history.md, "gloo's vector forms ride").
inline constexpr std::size_t kVectorRideBytes = 64 << 10;

inline bool exchange_form(CollectiveKind op) {
  return op == CollectiveKind::kAllToAll || op == CollectiveKind::kAllToAllv;
}

// The bytes of this rank's payload for a vector form, or kNotInline (a form that never rides).
inline std::size_t vector_payload_bytes(const CallSignature& c, int n, int me) {
  if (!c.may_inline || !c.vector_form) return kNotInline;
  const std::size_t eb = dtype_bytes(c.dtype);
  if (c.op == CollectiveKind::kAllGatherv) return c.count * eb;
  if (!exchange_form(c.op)) return kNotInline;
  std::size_t bytes = static_cast<std::size_t>(n) * sizeof(std::uint64_t);
  for (int j = 0; j < n; ++j)
    if (j != me) bytes += c.sends[static_cast<std::size_t>(j)] * eb;
  return bytes;
}
}  // namespace inline_call

// Whether `mine` rides inside the exchange on a backend of `shape`, and with what.
inline InlineCall plan_inline(const AgreementShape& shape, const CallSignature& mine) {
  const int n = shape.ranks, me = shape.rank;
  const std::size_t capacity = shape.row_bytes - kDigestBytes;
  InlineCall ride{.call = &mine};
  if (mine.vector_form) {
    ride.payload = inline_call::vector_payload_bytes(mine, n, me);
    ride.rides = ride.contributes = ride.payload <= std::min(capacity, inline_call::kVectorRideBytes);
    return ride;
  }
  ride.payload = inline_call::inline_bytes(mine, n, capacity);
  ride.rides = ride.payload != inline_call::kNotInline;
  // What this rank contributes to the rows: its input (a broadcast's or scatter's root only).
  const bool rooted = mine.op == CollectiveKind::kBroadcast || mine.op == CollectiveKind::kScatter;
  ride.contributes = ride.rides && ride.payload > 0 && (!rooted || me == mine.root);
  return ride;
}

// Runs the agreement exchange with `ride.call` carried in the rows (ride.rides) and, once every
// rank agrees, finishes the call from them. Returns false when it did not ride after all (a
// vector form some rank could not carry): the backend then runs it.
bool run_inline(Backend& backend, const AgreementShape& shape, const InlineCall& ride);

}  // namespace chorus::rt
