// The runtime's agreement before every collective (rt/agreement.h) on mpi, up to 8 ranks: each
// rank's row sent straight to every peer, only the part in use, into a receive with room for a
// full row. One message each way per peer; a call that rides inside it needs nothing more.
#include <fmt/format.h>

#include <cstddef>
#include <cstring>
#include <string_view>

#include "rt/agreement.h"
#include "rt/backends/agreement.h"
#include "rt/backends/mpi/mpi_backend.h"
#include "rt/errors.h"

namespace chorus::rt::mpi_backend {

void MpiBackend::create_agreement_exchange() {
  if (size_ < 2 || size_ > kRowExchangeRanks) return;  // one rank: no exchange; beyond: the all-gather
  const std::size_t row_bytes = agreement_row_bytes(*this);
  const auto ranks = static_cast<std::size_t>(size_);
  agreement_send_.assign(row_bytes, 0);
  agreement_received_.assign((ranks - 1) * row_bytes, 0);
  agreement_rows_.resize(ranks);
  for (std::size_t p = 0, q = 0; p < ranks; ++p)
    agreement_rows_[p] =
        p == static_cast<std::size_t>(rank_) ? agreement_send_.data() : agreement_received_.data() + q++ * row_bytes;
  agreement_requests_.assign(2 * (ranks - 1), MPI_REQUEST_NULL);
  agreement_statuses_.resize(2 * (ranks - 1));
}

const char* const* MpiBackend::agreement_exchange(std::size_t used) {
  // Named for the watchdog and in errors as the call it precedes (the row opens with its
  // signature): a peer that never calls it leaves this rank "in all_reduce", as the
  // all-gather did.
  CollectiveKind op = CollectiveKind::kBarrier;
  std::memcpy(&op, agreement_send_.data() + offsetof(OpSignature, op), sizeof op);
  const char* what = to_string(op).data();  // a literal: NUL-terminated
  const std::size_t row_bytes = agreement_send_.size();
  const int room = to_int(row_bytes, what), sent = to_int(used, what), peers = size_ - 1;
  MPI_Request* reqs = agreement_requests_.data();
  // The receives first, so that a peer's row lands in place rather than in MPI's queue of
  // unexpected messages. They are complete (or the backend is broken) before the caller reads
  // the rows, and posted again only at the next exchange, after it has read them: one set of
  // buffers suffices, and MPI keeps each peer's rows in order.
  for (int p = 0, q = 0; p < size_; ++p) {
    if (p == rank_) continue;
    check(MPI_Irecv(agreement_received_.data() + static_cast<std::size_t>(q) * row_bytes, room, MPI_BYTE, p,
                    kAgreementTag, comm_, &reqs[q]),
          what);
    ++q;
  }
  for (int p = 0, q = 0; p < size_; ++p) {
    if (p == rank_) continue;
    check(MPI_Isend(agreement_send_.data(), sent, MPI_BYTE, p, kAgreementTag, comm_, &reqs[peers + q++]), what);
  }
  // Blocking like the collective it stands for (a peer that never calls it is the watchdog's).
  const int rc = wait_all_guarded(reqs, 2 * peers, agreement_statuses_.data(), what);
  if (rc != MPI_SUCCESS) [[unlikely]]
    throw_exchange_error(rc, what);
  return agreement_rows_.data();
}

void MpiBackend::throw_exchange_error(int rc, const char* what) {
  const int peers = size_ - 1;
  for (int q = 0; rc == MPI_ERR_IN_STATUS && q < peers; ++q) {
    int error_class = MPI_SUCCESS;
    MPI_Error_class(agreement_statuses_[static_cast<std::size_t>(q)].MPI_ERROR, &error_class);
    if (error_class != MPI_ERR_TRUNCATE) continue;
    // Every rank's row has the same room (a function of the world size), so only a peer that
    // computes it otherwise (another build of chorus) can send more; MPI wrote no more than it.
    const int peer = q < rank_ ? q : q + 1;
    throw CommError(
        fmt::format("mpi {} on rank {}: rank {} sent an agreement row larger than the {} bytes of "
                    "room every rank's row has (do the ranks run the same build of chorus?)",
                    what, rank_, peer, agreement_send_.size()));
  }
  if (rc == MPI_ERR_IN_STATUS)  // the first request that failed says why
    for (const MPI_Status& s : agreement_statuses_)
      if (s.MPI_ERROR != MPI_SUCCESS && s.MPI_ERROR != MPI_ERR_PENDING) throw_mpi_error(s.MPI_ERROR, what);
  throw_mpi_error(rc, what);
}

}  // namespace chorus::rt::mpi_backend
