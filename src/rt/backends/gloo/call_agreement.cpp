// The runtime's agreement before every collective (rt/agreement.h) on gloo: up to 8 ranks, each
// rank's row sent straight to every peer (RowExchange, over the small connections); beyond, its
// fixed-size all-gather as one classic all-reduce of each rank's row among zeros.
#include <gloo/transport/pair.h>

#include <cstring>

#include "rt/backends/gloo/gloo_backend.h"

namespace chorus::rt::gloo_backend {

RowExchange::RowExchange(const std::shared_ptr<gloo::Context>& context, std::size_t row_bytes)
    : rank_(context->rank), size_(context->size), row_bytes_(row_bytes), send_(row_bytes), rows_(size_) {
  const auto peers = static_cast<std::size_t>(size_ - 1);
  // Two slots, one per turn; every rank takes them in the same order as its peers do.
  const int slot = context->nextSlot(2);
  for (int turn = 0; turn < 2; ++turn) {
    received_[turn].resize(peers * row_bytes_);
    for (int p = 0, q = 0; p < size_; ++p) {
      if (p == rank_) continue;
      auto& pair = context->getPair(p);
      sends_[turn].push_back(pair->createSendBuffer(slot + turn, send_.data(), row_bytes_));
      recvs_[turn].push_back(pair->createRecvBuffer(
          slot + turn, received_[turn].data() + static_cast<std::size_t>(q++) * row_bytes_, row_bytes_));
    }
  }
}

const char* const* RowExchange::run(std::size_t used) {
  auto& sends = sends_[turn_];
  auto& recvs = recvs_[turn_];
  for (auto& s : sends) s->send(0, used, 0);
  for (auto& r : recvs) r->waitRecv();
  // Before the caller writes the next row into send_ (a send may still be in Gloo's queue).
  for (auto& s : sends) s->waitSend();
  for (int p = 0, q = 0; p < size_; ++p)
    rows_[static_cast<std::size_t>(p)] =
        p == rank_ ? send_.data() : received_[turn_].data() + static_cast<std::size_t>(q++) * row_bytes_;
  turn_ ^= 1;
  return rows_.data();
}

void GlooBackend::agreement_all_gather(const void* mine, void* all, std::size_t bytes) {
  if (!agreement_ || bytes * static_cast<std::size_t>(size_) != agreement_rows_.size())
    return Backend::agreement_all_gather(mine, all, bytes);
  guard(
      "all_reduce",
      [&] {
        std::memset(agreement_rows_.data(), 0, agreement_rows_.size());
        std::memcpy(agreement_rows_.data() + static_cast<std::size_t>(rank_) * bytes, mine, bytes);
        agreement_->run(agreement_rows_.data(), all);
      },
      -1, true);
}

const char* const* GlooBackend::agreement_exchange(std::size_t used) {
  const char* const* rows = nullptr;
  guard(
      "all_reduce", [&] { rows = exchange_->run(used); }, -1, true);
  return rows;
}

}  // namespace chorus::rt::gloo_backend
