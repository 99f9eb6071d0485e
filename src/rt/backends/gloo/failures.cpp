// Gloo's exceptions as the runtime's errors (guard(), gloo_backend.h): this rank's abort, else a
// peer process found dead (one host), else after a timeout the peer or the ranks that never
// reached the collective (found through a store barrier), else a peer that published its own
// failure (an abort closes its connections), else Gloo's message with the rank. And the abort
// itself: interrupt() ends the operations in flight through Gloo's own error path.
#include <chrono>
#include <fmt/format.h>
#include <string>
#include <thread>
#include <vector>

#include <gloo/transport/unbound_buffer.h>

#include "rt/backends/gloo/gloo_backend.h"
#include "rt/rendezvous/store.h"
#include "rt/transport/shm/futex.h"  // process_dead

namespace chorus::rt::gloo_backend {

void GlooBackend::interrupt(const std::string& why) {
  static_cast<void>(why);  // the operations that end name it from the runtime's AbortMark
  if (size_ < 2) return;
  // Gloo's tcp transport has a way to end every wait at once, but its headers cannot be
  // included from Debian's package (they need gloo/common/memory.h, which it does not ship).
  // Its public interface reaches the same path: a receive that times out makes Gloo fail every
  // operation pending on every connection of its context and close them (an "application
  // timeout"). So: a one-byte receive on a slot no rank ever sends to, timed out at once.
  // Safe from any thread: each connection takes its own lock.
  constexpr std::uint64_t kNeverSentSlot = ~std::uint64_t{0};
  for (const auto& context : {context_, small_context_}) {
    if (context == nullptr) continue;
    char byte = 0;
    try {
      auto never = context->createUnboundBuffer(&byte, 1);
      never->recv(rank_ == 0 ? 1 : 0, kNeverSentSlot);
      never->waitRecv(std::chrono::milliseconds(1));
    } catch (const std::exception&) {
      // the expected timeout (or the connections had already failed)
    }
  }
}

void GlooBackend::fail(const char* what, const std::string& gloo_msg, int peer) {
  if (const std::string* why = aborted_ ? aborted_->reason() : nullptr)
    throw CommError(fmt::format("gloo {} on rank {}: {}", what, rank_, *why));
  const bool timed_out = gloo_msg.find("Timed out") != std::string::npos ||
                         gloo_msg.find("timed out") != std::string::npos ||
                         gloo_msg.find("Timeout") != std::string::npos ||
                         gloo_msg.find("timeout") != std::string::npos;  // classic: "Read timeout"
  // A dying process closes its sockets a moment before it becomes a zombie: after a
  // broken connection, look for the dead peer for up to 200 ms.
  std::string dead;
  for (int attempt = 0; dead.empty() && attempt < (timed_out ? 1 : 20); ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (int j = 0; j < static_cast<int>(pids_.size()); ++j)
      if (j != rank_ && process_dead(pids_[j]))
        dead += fmt::format("{}{}", dead.empty() ? "" : ", ", gone_peer(failure_of_, j, pids_[j]));
  }
  if (!dead.empty()) throw CommError(fmt::format("gloo {} on rank {}: {} (gloo: {})", what, rank_, dead, gloo_msg));
  if (timed_out) {
    const std::vector<int> stuck = peer >= 0 ? std::vector<int>{} : ranks_not_here();
    const std::string who = peer >= 0       ? fmt::format("rank {}", peer)
                            : stuck.empty() ? std::string("a peer")
                                            : fmt::format("rank{} {} (which never reached this collective)",
                                                          stuck.size() > 1 ? "s" : "", rank_list(stuck));
    throw TimeoutError(
        fmt::format("gloo {} on rank {}: timed out waiting for {} after {} ms (the "
                    "peer is stuck or the ranks disagree on the call; gloo: {})",
                    what, rank_, who, timeout_.count(), gloo_msg));
  }
  // A peer that aborted (or failed otherwise and said why) closed its connections.
  std::string first;
  for (int j = 0; failure_of_ && j < size_; ++j)
    if (j != rank_)
      if (const std::string why = failure_of_(j); !why.empty())
        first += fmt::format("{}rank {} failed first: {}", first.empty() ? "" : "; ", j, why);
  if (!first.empty()) throw CommError(fmt::format("gloo {} on rank {}: {} (gloo: {})", what, rank_, first, gloo_msg));
  throw CommError(fmt::format("gloo {} on rank {}{}: {}", what, rank_,
                              peer >= 0 ? fmt::format(" with rank {}", peer) : std::string(), gloo_msg));
}

std::vector<int> GlooBackend::ranks_not_here() {
  if (store_ == nullptr) return {};
  const std::string name = fmt::format("{}/timed-out/{}", key_prefix_, collectives_);
  try {
    store_->arrive(name, rank_);
    std::vector<int> missing = store_->missing_ranks(name, size_);
    for (int i = 0; i < 10 && !missing.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      missing = store_->missing_ranks(name, size_);
    }
    return missing;
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace chorus::rt::gloo_backend
