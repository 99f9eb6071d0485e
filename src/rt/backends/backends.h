#pragma once
// Factories of the concrete backends, and what each needs from the bootstrap.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "rt/backend.h"
#include "rt/rendezvous/store.h"

namespace chorus::rt {

// rt::abort's mark, shared by a runtime's backends: `why` is written once, before `set` is
// released, and never again.
struct AbortMark {
  std::atomic<bool> set{false};
  std::string why;
  // The reason once the runtime is aborted, else null.
  const std::string* reason() const { return set.load(std::memory_order_acquire) ? &why : nullptr; }
};

struct BackendContext {
  int rank = 0;
  int size = 1;
  Store* store = nullptr;  // rendezvous store shared by all ranks
  // The same store held weakly, for a backend's own threads (gloo's waiting line): a broken
  // backend outlives the runtime and its store. Expired (or empty): the store is gone.
  std::weak_ptr<Store> store_weak;
  std::string key_prefix;               // unique per run and backend instance, for store keys
  bool single_host = true;              // every rank on this host (required by shm)
  std::string gloo_host = "127.0.0.1";  // address peers reach this rank's gloo device at
  std::chrono::milliseconds timeout{300000};
  // A group (rt::split): mpi splits MPI_COMM_WORLD by this color and key; -1: the whole world
  // (a duplicate of MPI_COMM_WORLD).
  int mpi_color = -1;
  int mpi_key = 0;
  // The failure a rank of this backend reported before it ended (finalize() of a broken runtime
  // publishes its first error), or empty: lets a survivor tell a peer that exited on its own
  // error from one that died. Null: cannot tell.
  std::function<std::string(int rank)> failure_of;
  // Set by Runtime::abort (rt::abort): the waits that can end early end with a CommError naming
  // the reason (shm's, within milliseconds; gloo's through Backend::interrupt). Null: never.
  std::shared_ptr<const AbortMark> aborted;
  // Called with the message before a backend ends the process itself (mpi's watchdog, which
  // must MPI_Abort a collective stuck past the timeout): the runtime writes its flight record.
  std::function<void(const std::string&)> before_abort;
};

// "rank 1 (pid 42) died", or "rank 1 (pid 42) ended after its own failure: MESSAGE" when the
// rank said why (BackendContext::failure_of).
std::string gone_peer(const std::function<std::string(int)>& failure_of, int rank, long pid);

std::unique_ptr<Backend> make_mpi_backend(const BackendContext& ctx);
std::unique_ptr<Backend> make_gloo_backend(const BackendContext& ctx);
std::unique_ptr<Backend> make_shm_backend(const BackendContext& ctx);

}  // namespace chorus::rt
