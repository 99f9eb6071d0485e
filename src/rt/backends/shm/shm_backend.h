#pragma once
// Backend "shm": the collectives of the ranks of one host, over our own shared-memory transport
// (transport/shm/shm_transport.h: the segment, steps, rings, lines, cross-memory attach).
// Collectives run in chunk-sized rounds over the ranks' two data slots, separated by steps.
//
// Ranks that disagree on a call fail together instead of corrupting each other: every
// collective's first step carries a signature of the call, which every rank compares with every
// peer's before data moves, and every point-to-point message its size (backends/agreement.h).
//
// The backend's ideas, one file each:
//   shm_backend.cpp  set-up, the operations' table, point to point, barrier, and broadcast
//                    (through the slots, or single-copy by cross-memory attach)
//   reductions.cpp   all_reduce, reduce and reduce_scatter over the slots (one step when small)
//   exchange.cpp     the exchange engine: all_gather(v), gather(v), scatter(v), the all-to-alls,
//                    and the runtime's digest exchange
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rt/backends/agreement.h"
#include "rt/backends/backends.h"
#include "rt/backends/operation_table.h"
#include "rt/transport/shm/shm_transport.h"

namespace chorus::rt::shm_backend {

// Largest (message bytes x ranks) all-reduced in one step (see one_step_reduce): each rank
// reads every rank's data, so the one-step form wins while that fits in the caches.
inline constexpr std::size_t kOneStepBytes = 256 << 10;
// Broadcasts of at least this many bytes read the root's buffer directly (when allowed).
inline constexpr std::size_t kCmaMinBytes = std::size_t{1} << 20;

class ShmBackend final : public Backend {
 public:
  explicit ShmBackend(const BackendContext& ctx);

  std::string name() const override { return "shm"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // Everything runs on this transport's own code: all_gather through all_gatherv, and gather,
  // scatter, gatherv, scatterv and the all-to-alls through the exchange engine.
  bool native(CollectiveKind) const override { return true; }
  // Sends touch only the head of their ring, receives only the tail of theirs, collectives
  // only the slots: the three may run on different threads.
  bool concurrent_point_to_point() const override { return true; }
  // This rank's own waits end by themselves (BackendContext::aborted); the peers are told
  // through the segment, so that their waits for this rank end too.
  void interrupt(const std::string&) override { t_.mark_aborted(); }
  // Every collective compares its peers' signatures at its first step (agreement.h).
  bool agrees_on_data_path() const override { return true; }
  bool takes_avg() const override { return true; }  // so that avg and sum differ in the signatures

  void send(const void* buf, std::size_t bytes, int dst) override;
  void recv(void* buf, std::size_t bytes, int src) override;
  void send_recv(const void* sbuf, std::size_t sbytes, int dst, void* rbuf, std::size_t rbytes, int src) override;
  void agree_empty(const Call& c) override;
  void agreement_all_gather(const void* mine, void* all, std::size_t bytes) override;

 private:
  // The operations' table (shm_backend.cpp): every kind on this backend's own code, below,
  // each in the file of its idea.
  static const OperationTable& operations();
  template <typename B, CollectiveKind kind>
  friend void chorus::rt::own(Backend& backend, const Call& c, ReduceOp op);
  void barrier();
  void broadcast(void* buf, std::size_t count, DType dtype, int root);
  void all_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op);
  void reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root);
  void reduce_scatter(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op);
  void all_gather(const void* in, void* out, std::size_t count, DType dtype);
  void all_gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                   DType dtype);
  void all_to_allv(const void* in, const Counts& sc, const Counts& sd, void* out, const Counts& rc, const Counts& rd,
                   DType dtype);
  void all_to_all(const std::vector<const void*>& ins, const Counts& in_counts, const std::vector<void*>& outs,
                  const Counts& out_counts, DType dtype);
  void gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs, DType dtype,
               int root);
  void scatterv(const void* in, const Counts& counts, const Counts& displs, void* out, std::size_t count, DType dtype,
                int root);
  // gather, scatter and all_to_all_single: their v-forms with every count alike.
  void gather(const void* in, void* out, std::size_t count, DType dtype, int root);
  void scatter(const void* in, void* out, std::size_t count, DType dtype, int root);
  void all_to_all_single(const void* in, void* out, std::size_t count, DType dtype);
  // shm_backend.cpp
  void single_copy_broadcast(char* data, std::size_t bytes, int root, const OpSignature& sig);
  // reductions.cpp
  void reduce_impl(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root);
  void one_step_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root,
                       const OpSignature& sig);
  static std::size_t one_step_limit();
  // exchange.cpp
  void gather_all(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs, DType dtype,
                  const OpSignature& sig, std::optional<std::uint64_t> declared = std::nullopt);
  void exchange(const std::vector<const char*>& sp, const std::vector<std::size_t>& sb, const std::vector<char*>& dp,
                const std::vector<std::size_t>& db, const OpSignature& sig);

  ShmTransport t_;
  int rank_;
  int size_;
  // All-reduce / reduce of at most this many bytes (times the world size) in one step.
  std::size_t one_step_bytes_ = one_step_limit();
};

}  // namespace chorus::rt::shm_backend
