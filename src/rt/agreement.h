#pragma once
// Agreement without checking mode on the backends whose data path cannot carry a signature
// (gloo, mpi: their libraries' messages take no header of ours, and a message larger than its
// receive buffer aborts Gloo's device thread or corrupts Open MPI's heap): the verdict. Before
// each collective, every rank contributes a row to one all-gather whose size depends only on the
// world size (Backend::agreement_all_gather: a shape that cannot itself disagree): a 32-byte
// digest of its call, which every rank compares with its own before any data moves, so that
// ranks that disagree fail together, naming both calls, worded as on shm (backends/agreement.h).
// A backend may run the exchange on buffers of its own instead (Backend::agreement_row and
// agreement_exchange; gloo and mpi up to 8 ranks): each rank sends only the part of its row in
// use, into room for a full row at each peer, which is just as unable to disagree, and lets the
// rows carry calls of several KiB without small calls paying for them.
//
// The rest of each row is room for a small call's data: inline_call.h carries calls that fit
// inside this same exchange and finishes them from the rows; agree() only decides, on the
// digests. Checking mode (checking.h) keeps its fuller verification instead.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "rt/backend.h"
#include "rt/backends/agreement.h"
#include "rt/checking.h"

namespace chorus::rt {

// Every row opens with the rank's digest of its call; a carried call's data follows it.
inline constexpr std::size_t kDigestBytes = 32;

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

// This rank's row for a call whose first `used` bytes (digest included) are in use: the
// backend's own, else one kept per thread (whose bytes past `used` are zero). The digest is
// agree()'s to write; a carrier writes its data after it first.
char* own_agreement_row(const AgreementShape& shape, std::size_t used);  // the thread's
inline char* agreement_row(const AgreementShape& shape, std::size_t used) {
  return shape.row != nullptr ? shape.row : own_agreement_row(shape, used);
}

// The flag a row's digest carries (in OpSignature::vector_form) when its rank carries its data
// of a vector form in the row: such a call rides only when every row says so.
inline constexpr std::uint8_t kRowCarries = 2;
inline bool row_carries(const char* row) {
  OpSignature s;
  std::memcpy(&s, row, sizeof s);
  return (s.vector_form & kRowCarries) != 0;
}

// Runs the exchange on `backend` (of `shape`) for the call `mine` and compares every rank's
// digest with this rank's; throws DisagreementError on any disagreement. `row` is
// agreement_row(shape, used) with the carrier's data, if any, after the digest (null: the
// digest alone), `carries` whether it holds this rank's data of a vector form. Returns every
// rank's row, in rank order, valid until the next exchange on this thread and backend.
const char* const* agree(Backend& backend, const AgreementShape& shape, const CallSignature& mine, char* row = nullptr,
                         std::size_t used = kDigestBytes, bool carries = false);

// Some rank sends a peer a number of elements other than the peer expects (a vector form's
// traffic): what the digests show, and what a carrier finds when a block is out of its row.
[[noreturn, gnu::cold]] void throw_traffic_disagreement(const Backend& b, const CallSignature& mine);

}  // namespace chorus::rt
