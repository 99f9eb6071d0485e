// Gloo's exceptions as the runtime's errors (guard(), gloo_backend.h): a peer process found dead
// (one host), else after a timeout the peer or the ranks that never reached the collective
// (found through a store barrier), else Gloo's message with the rank.
#include <chrono>
#include <fmt/format.h>
#include <string>
#include <thread>
#include <vector>

#include "rt/backends/gloo/gloo_backend.h"
#include "rt/rendezvous/store.h"
#include "rt/transport/shm/futex.h"  // process_dead

namespace chorus::rt::gloo_backend {

void GlooBackend::fail(const char* what, const std::string& gloo_msg, int peer) {
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
