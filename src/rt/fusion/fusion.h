#pragma once
// Tensor fusion (MCR-DL Sec. V-E): many small operations of one kind fused into few large ones:
// all-reduces, broadcasts (of one root), all-gathers, reduce-scatters, all-to-alls (of equal or
// uneven blocks), and reduces, gathers and scatters (of one root).
//
//   chorus::rt::Fusion fusion({"shm", "gloo"}, {.buffer_bytes = 1 << 20, .cycle_us = 200});
//   for (auto& g : grads) works.push_back(fusion.all_reduce("shm", g.data(), g.data(), g.size(),
//                                                           DType::f32, ReduceOp::avg));
//   for (auto& w : works) w.wait();
//
// An operation submitted here returns a Work at once and waits in a queue. A cycle thread
// collects the queue at most T microseconds after its oldest entry arrived (sooner when B bytes
// are queued), agrees with the other ranks on how many operations every rank has queued (the
// minimum) and on their signatures (a hash: ranks that submitted different operations get an
// InputError, not a wrong sum), then packs them, in submission order, into buffers of at most B
// bytes per kind: (all-reduce or reduce-scatter, backend, dtype, reduce op), (reduce, backend,
// dtype, reduce op, root), (broadcast, gather or scatter, backend, root), (all-gather, backend),
// (all-to-all, backend) or (uneven all-to-all, backend), each issued as one
// asynchronous operation of that kind (broadcasts, all-gathers, all-to-alls, gathers and
// scatters move bytes, so they fuse across dtypes; B bounds an operation's part per rank). Buffers of different backends run at
// once: an under-filled buffer on one backend overlaps with the others'. An operation larger
// than B (per rank) runs alone, on the caller's buffers, in its turn. The results
// are element by element what separate operations give, up to the floating-point reduction
// order of a larger all-reduce.
//
// Fused operations run on groups of their own (one per backend, made with rt::split), so they
// never queue behind, nor interleave with, the program's other operations: ordering holds among
// the fused operations of one Fusion only. Wait for a fused operation before using its buffer in
// another operation.
//
// As a layer of the submission path: a Communicator given a fusion (Runtime::add_fusion,
// Runtime::communicator(name, fusion); rt::communicator(name, options)) sends the calls the
// fusion takes (Fusion::takes, the one rule) through it and runs the others as it would without:
//
//   auto comm = chorus::rt::communicator("gloo", chorus::rt::FusionOptions{});  // collective
//   for (auto& g : grads) works.push_back(comm.issue(calls::all_reduce(g, g, n, f32, sum), true));
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rt/call.h"
#include "rt/types.h"
#include "rt/work.h"

namespace chorus::rt {

class Runtime;  // rt/runtime_instance.h

// The operations tensor fusion fuses (the others run as they are issued): kOpTraits' `fuses`.
constexpr bool fuses(CollectiveKind op) { return traits(op).fuses; }

struct FusionOptions {
  // B: a fused buffer holds at most this many bytes; an operation larger runs alone.
  std::size_t buffer_bytes = std::size_t{1} << 20;
  // T: the longest an operation waits in the queue before its cycle starts.
  std::int64_t cycle_us = 200;
};

// "B,T" as in CHORUS_FUSION=1MiB,200 (bytes as parse_bytes reads them, microseconds); "on" or
// "1": the defaults. InputError naming `field` on bad text, B below 8 bytes or above 1 GiB, T
// below 1 or above 10^7 us.
FusionOptions parse_fusion_options(std::string_view text, const std::string& field);

class Fusion {
 public:
  // Collective over `runtime`'s world: every rank constructs its Fusion objects on its runtime in
  // the same order, with the same backends and options, while no other operation of that runtime
  // is being issued (it makes groups). `backends`: initialised backends, or "auto" for all of
  // them; operations name one of these or "auto" (resolved per fused buffer, by the buffer's
  // size). The runtime must outlive the Fusion.
  Fusion(Runtime& runtime, const std::vector<std::string>& backends, const FusionOptions& options = {});
  // The same on the process's default runtime (rt::init's).
  explicit Fusion(const std::vector<std::string>& backends, const FusionOptions& options = {});
  // Collective: flushes what is queued (every rank must destroy its Fusion), waits for every
  // fused operation, stops the cycle thread. Destroy before rt::finalize().
  ~Fusion();
  Fusion(const Fusion&) = delete;
  Fusion& operator=(const Fusion&) = delete;

  // Queues `call` (rt/call.h: rt::calls::all_reduce(...) and the like; an operation fuses() takes,
  // not compressed): what the functions below do, for callers that hold the operation as data.
  // `start_now`: the caller waits for it at once (a blocking call of a Communicator), so its
  // cycle starts now rather than T after the oldest queued operation arrived.
  Work issue(std::string_view backend, Call call, bool start_now = false);
  // Whether a Communicator given this fusion sends `call` through it: an operation it fuses
  // (fuses()), not compressed, of at most B bytes per rank, or an uneven all-to-all whatever its
  // size (its size differs per rank: only the cycle's agreement can decide, alike on every rank,
  // which runs alone). A function of what every rank's call holds alike, so every rank decides
  // the same. Communicator::issue runs the others on the runtime, as without the fusion.
  bool takes(const Call& call) const {
    return fuses(call.op) && !call.compression &&
           (call.op == CollectiveKind::kAllToAllv || call.bytes() <= buffer_bytes_);
  }
  // The initialised backends it runs on ("auto" given at construction: all of them).
  const std::vector<std::string>& backends() const;
  // Queues an all-reduce of `count` elements from `in` to `out` (in == out allowed). The
  // buffers are the runtime's until the Work completes.
  Work all_reduce(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op);
  // Queues a broadcast of `count` elements of `buf` from world rank `root`, in place.
  Work broadcast(std::string_view backend, void* buf, std::size_t count, DType dtype, int root);
  // Queues an all-gather: `count` elements from `in`; `out` holds size() * count, block j from rank j.
  Work all_gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype);
  // Queues a reduce-scatter: `in` holds size() * count elements; `out` gets this rank's `count`.
  Work reduce_scatter(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op);
  // Queues an all-to-all of equal blocks: `in` and `out` hold size() * count elements, block j
  // to / from rank j.
  Work all_to_all_single(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype);
  // Queues an all-to-all of uneven blocks (an MoE layer's token dispatch): block j of `in`
  // (send_counts[j] elements at send_displs[j]) goes to rank j, block i of `out` (recv_counts[i]
  // at recv_displs[i]) comes from rank i; one entry per rank, in elements of `dtype`. A rank
  // knows only its own counts, so a cycle holding such operations adds one all-reduce (max) of
  // each one's largest block: every rank packs by those, and an operation whose largest block
  // on some rank exceeds B runs alone (on every rank).
  Work all_to_allv(std::string_view backend, const void* in, const std::vector<std::size_t>& send_counts,
                   const std::vector<std::size_t>& send_displs, void* out, const std::vector<std::size_t>& recv_counts,
                   const std::vector<std::size_t>& recv_displs, DType dtype);
  // Queues a reduce to world rank `root`: `count` elements from `in`; `out` (read at the root
  // only, may be null elsewhere; in == out allowed) gets the reduction.
  Work reduce(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
              int root);
  // Queues a gather to `root`: `count` elements from `in`; `out` (at the root only) holds
  // size() * count, block j from rank j.
  Work gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, int root);
  // Queues a scatter from `root`: `in` (at the root only) holds size() * count elements, block j
  // to rank j; `out` gets this rank's `count`.
  Work scatter(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, int root);
  // Waits until every operation submitted so far has completed (rethrows nothing: the errors
  // are in the operations' Works).
  void flush();

  struct Stats {
    std::uint64_t ops = 0;      // operations submitted
    std::uint64_t buffers = 0;  // operations issued for them
    std::uint64_t cycles = 0;   // agreements among the ranks
  };
  Stats stats() const;
  const FusionOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::size_t buffer_bytes_ = 0;  // B, for takes()
};

}  // namespace chorus::rt
