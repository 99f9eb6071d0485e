#pragma once
// Agreement without checking mode on the backends whose data path cannot carry a signature
// (gloo, mpi: their libraries' messages take no header of ours, and a message larger than its
// receive buffer aborts Gloo's device thread or corrupts Open MPI's heap). Before each
// collective, every rank contributes a row to one all-gather whose size depends only on the
// world size (Backend::agreement_all_gather: a shape that cannot itself disagree): a 32-byte
// digest of its call, which every rank compares with its own before any data moves, so that
// ranks that disagree fail together, naming both calls, worded as on shm (backends/agreement.h).
// A backend may run the exchange on buffers of its own instead (Backend::agreement_row and
// agreement_exchange; gloo and mpi up to 8 ranks): each rank sends only the part of its row in
// use, into room for a full row at each peer, which is just as unable to disagree, and lets the
// rows carry calls of several KiB without small calls paying for them.
//
// The rest of the row carries small calls themselves: a collective whose data fits (at most
// Backend::agreement_inline_bytes() per rank, the default algorithm) rides inside the exchange and is
// finished locally from the rows (an all-reduce reduces the n rows in rank order, a broadcast
// copies the root's ...), so the agreement costs such calls nothing: the exchange is the
// operation. Larger calls run on the backend after it. Checking mode (checking.h) keeps its
// fuller verification instead.
#include <cstddef>

#include "rt/backend.h"
#include "rt/checking.h"

namespace chorus::rt {

// Each rank's row: the digest, then room for Backend::agreement_inline_bytes() of data.
std::size_t agreement_row_bytes(const Backend& backend);

// What the exchange needs of a backend, fixed when the backend is made: read once, not through
// virtual calls before every collective.
struct AgreementShape {
  int ranks = 1, rank = 0;
  std::size_t row_bytes = 0;
  char* row = nullptr;  // Backend::agreement_row(): the backend's own row, or null
};
AgreementShape agreement_shape(Backend& backend);

// Runs the exchange on `backend` (of `shape`) for the call `mine`; throws CommError on any
// disagreement. Returns true when the exchange carried the call itself (its result is in
// place: skip the backend's operation).
bool agree(Backend& backend, const AgreementShape& shape, const CallSignature& mine);

}  // namespace chorus::rt
