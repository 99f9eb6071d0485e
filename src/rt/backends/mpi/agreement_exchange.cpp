// The runtime's agreement before every collective (rt/agreement.h) on mpi, up to 8 ranks: each
// rank's row sent straight to every peer, only the part in use, into receives with room for a
// full row. A row goes in parts of at most kPartBytes, each an eager message of Open MPI's
// shared-memory transport, all sent at once; the first part opens with the row's length on
// the wire, from which the receiver learns how many parts follow. A call that rides inside the
// exchange needs nothing more.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "rt/agreement.h"
#include "rt/backends/agreement.h"
#include "rt/backends/mpi/mpi_backend.h"
#include "rt/errors.h"

namespace chorus::rt::mpi_backend {

namespace {

std::size_t parts_of(std::size_t wire_bytes) { return (wire_bytes + kPartBytes - 1) / kPartBytes; }

}  // namespace

void MpiBackend::create_agreement_exchange() {
  if (size_ < 2 || size_ > kRowExchangeRanks) return;  // one rank: no exchange; beyond: the all-gather
  // Each row after a part header of its own (on the wire, the first part's opening bytes): the
  // rows start 8 bytes into their room and keep the alignment of the data they carry.
  static_assert(kPartHeader % 8 == 0 && kPartBytes % 8 == 0);
  const std::size_t room = kPartHeader + agreement_row_bytes(*this);
  const auto ranks = static_cast<std::size_t>(size_), peers = ranks - 1;
  agreement_send_.assign(room, 0);
  agreement_received_.assign(peers * room, 0);
  agreement_rows_.resize(ranks);
  for (std::size_t p = 0, q = 0; p < ranks; ++p)
    agreement_rows_[p] =
        (p == static_cast<std::size_t>(rank_) ? agreement_send_.data() : agreement_received_.data() + q++ * room) +
        kPartHeader;
  // The first parts' receives, this rank's sends, and the further parts' receives.
  const std::size_t requests = peers * (1 + parts_of(room) + (parts_of(room) - 1));
  agreement_requests_.assign(requests, MPI_REQUEST_NULL);
  agreement_statuses_.resize(requests);
  agreement_peers_.assign(requests, -1);
  for (int p = 0, q = 0; p < size_; ++p)
    if (p != rank_) agreement_peers_[static_cast<std::size_t>(q++)] = p;
}

const char* const* MpiBackend::agreement_exchange(std::size_t used) {
  // Named for the watchdog and in errors as the call it precedes (the row opens with its
  // signature): a peer that never calls it leaves this rank "in all_reduce", as the
  // all-gather did.
  CollectiveKind op = CollectiveKind::kBarrier;
  std::memcpy(&op, agreement_send_.data() + kPartHeader + offsetof(OpSignature, op), sizeof op);
  const char* what = to_string(op).data();  // a literal: NUL-terminated
  const std::size_t room = agreement_send_.size();
  const std::uint64_t length = kPartHeader + used;  // this row on the wire
  std::memcpy(agreement_send_.data(), &length, sizeof length);
  const int first_room = to_int(std::min(room, kPartBytes), what), peers = size_ - 1;
  const auto parts = static_cast<int>(parts_of(length));
  MPI_Request* reqs = agreement_requests_.data();
  // The first parts' receives first, so that a peer's row lands in place rather than in MPI's
  // queue of unexpected messages. They are complete (or the backend is broken) before the
  // caller reads the rows, and posted again only at the next exchange, after it has read them:
  // one set of buffers suffices, and MPI keeps each peer's messages in order.
  for (int p = 0, q = 0; p < size_; ++p) {
    if (p == rank_) continue;
    check(MPI_Irecv(agreement_received_.data() + static_cast<std::size_t>(q) * room, first_room, MPI_BYTE, p,
                    kAgreementTag, comm_, &reqs[q]),
          what);
    ++q;
  }
  // Every part to every peer at once, the first parts first (all eager: none waits for a receive).
  int posted = peers;
  for (int part = 0; part < parts; ++part) {
    const std::size_t at = static_cast<std::size_t>(part) * kPartBytes;
    const int bytes = to_int(std::min<std::size_t>(kPartBytes, length - at), what);
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) continue;
      agreement_peers_[static_cast<std::size_t>(posted)] = -1;  // a send (the slot may have been a receive)
      check(MPI_Isend(agreement_send_.data() + at, bytes, MPI_BYTE, p, kAgreementTag, comm_, &reqs[posted++]), what);
    }
  }
  // Blocking like the collective it stands for (a peer that never calls it is the watchdog's).
  const int rc = wait_all_guarded(reqs, 2 * peers, agreement_statuses_.data(), what);
  if (rc != MPI_SUCCESS) [[unlikely]]
    throw_exchange_error(rc, 0, 2 * peers, what);
  // The common case: every row one part, as its length says (a length out of range goes on to
  // finish_parts, which refuses it).
  bool one_part = parts == 1;
  for (int q = 0; q < peers; ++q) {
    std::uint64_t theirs = 0;
    std::memcpy(&theirs, agreement_received_.data() + static_cast<std::size_t>(q) * room, sizeof theirs);
    one_part &= theirs - (kPartHeader + kDigestBytes) <= kPartBytes - (kPartHeader + kDigestBytes);
  }
  if (!one_part) [[unlikely]]
    finish_parts(posted, what);
  return agreement_rows_.data();
}

void MpiBackend::finish_parts(int posted, const char* what) {
  const std::size_t room = agreement_send_.size();
  int further = 0;
  for (int q = 0; q < size_ - 1; ++q) {
    const auto uq = static_cast<std::size_t>(q);
    char* base = agreement_received_.data() + uq * room;
    std::uint64_t length = 0;
    std::memcpy(&length, base, sizeof length);
    int first = 0;
    MPI_Get_count(&agreement_statuses_[uq], MPI_BYTE, &first);
    // A row shorter than a digest, longer than a full row, or whose first part is not as long
    // as the row says can only come from a peer that computes the rows otherwise (another build
    // of chorus): refused before any more of it is received.
    if (length < kPartHeader + kDigestBytes || length > room ||
        static_cast<std::size_t>(first) != std::min<std::size_t>(length, kPartBytes)) [[unlikely]] {
      // This rank's own further parts still go out first (guarded, like every wait here): a peer
      // whose row is refused may be a correct rank waiting for them, and no send request is left
      // behind for MPI to progress, or not, after the backend is broken.
      const int sends = 2 * (size_ - 1), own = posted - sends;
      if (own > 0)
        static_cast<void>(
            wait_all_guarded(agreement_requests_.data() + sends, own, agreement_statuses_.data() + sends, what));
      throw_row_too_large(agreement_peers_[uq], length, what);
    }
    for (std::size_t at = kPartBytes; at < length; at += kPartBytes) {
      const auto i = static_cast<std::size_t>(posted + further++);
      agreement_peers_[i] = agreement_peers_[uq];
      check(MPI_Irecv(base + at, to_int(std::min<std::size_t>(kPartBytes, length - at), what), MPI_BYTE,
                      agreement_peers_[uq], kAgreementTag, comm_, &agreement_requests_[i]),
            what);
    }
  }
  // This rank's further parts (sent after the first parts) and the peers' (received above).
  const int first = 2 * (size_ - 1), n = posted + further - first;
  if (n == 0) return;
  const int rc = wait_all_guarded(agreement_requests_.data() + first, n, agreement_statuses_.data() + first, what);
  if (rc != MPI_SUCCESS) [[unlikely]]
    throw_exchange_error(rc, first, n, what);
}

void MpiBackend::throw_row_too_large(int peer, std::size_t length, const char* what) {
  throw CommError(
      fmt::format("mpi {} on rank {}: rank {} sent an agreement row of {} bytes where every rank's row has {} bytes "
                  "of room (do the ranks run the same build of chorus?)",
                  what, rank_, peer, length, agreement_send_.size()));
}

void MpiBackend::throw_exchange_error(int rc, int first, int n, const char* what) {
  for (int i = first; rc == MPI_ERR_IN_STATUS && i < first + n; ++i) {
    const auto ui = static_cast<std::size_t>(i);
    int error_class = MPI_SUCCESS;
    MPI_Error_class(agreement_statuses_[ui].MPI_ERROR, &error_class);
    if (error_class != MPI_ERR_TRUNCATE || agreement_peers_[ui] < 0) continue;
    // Every rank's row has the same room (a function of the world size), and every part the
    // room its row's length gives it, so only a peer that computes them otherwise (another
    // build of chorus) can send more; MPI wrote no more than the room.
    throw CommError(
        fmt::format("mpi {} on rank {}: rank {} sent more of its agreement row than a receive had room for, in a row "
                    "of {} bytes of room received in parts of at most {} (do the ranks run the same build of chorus?)",
                    what, rank_, agreement_peers_[ui], agreement_send_.size(), kPartBytes));
  }
  if (rc == MPI_ERR_IN_STATUS)  // the first request that failed says why
    for (int i = first; i < first + n; ++i) {
      const int e = agreement_statuses_[static_cast<std::size_t>(i)].MPI_ERROR;
      if (e != MPI_SUCCESS && e != MPI_ERR_PENDING) throw_mpi_error(e, what);
    }
  throw_mpi_error(rc, what);
}

}  // namespace chorus::rt::mpi_backend
