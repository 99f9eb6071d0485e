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
#include <cstddef>

#include "rt/agreement.h"

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

// Whether `mine` rides inside the exchange on a backend of `shape`, and with what.
InlineCall plan_inline(const AgreementShape& shape, const CallSignature& mine);

// Runs the agreement exchange with `ride.call` carried in the rows (ride.rides) and, once every
// rank agrees, finishes the call from them. Returns false when it did not ride after all (a
// vector form some rank could not carry): the backend then runs it.
bool run_inline(Backend& backend, const AgreementShape& shape, const InlineCall& ride);

}  // namespace chorus::rt
