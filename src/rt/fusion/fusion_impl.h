#pragma once
// What the files of tensor fusion (fusion.h) share: the queued operation (FusedOp), the reused
// fused buffers (FusionBuffers) and Fusion::Impl, whose ideas are one file each:
//   fusion.cpp      options (CHORUS_FUSION's B,T), construction (the fusion's groups), flush
//   submit.cpp      the operations: each checked and queued for the cycle thread
//   cycle.cpp       the cycle thread: when a cycle starts, the agreement across ranks on how many
//                   operations and which (a signature), the uneven all-to-alls' agreed blocks
//   packing.cpp     the batch packed into fused buffers per BufferKey, issued, unpacked on completion
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "rt/buffer_pool.h"
#include "rt/call.h"
#include "rt/dtype.h"
#include "rt/fusion/fusion.h"
#include "rt/runtime_instance.h"
#include "rt/types.h"
#include "rt/work.h"

namespace chorus::rt {

// Types the Impl holds: in a named namespace (an anonymous one would give Impl internal-linkage
// members, which g++ warns about in unity builds).
namespace fusion_detail {

// One queued operation: the Call as submitted (Fusion::issue), with its backend and Work. The
// operations that move bytes (broadcasts, all-gathers, all-to-alls, gathers, scatters) are
// queued as u8 counts with reduce op sum, so that they fuse across dtypes, and a broadcast's
// buffer is both `in` and `out`. `count` is per rank: an all-gather's or gather's input, a
// reduce-scatter's or scatter's output, an all-to-all's block; an uneven all-to-all's largest
// block (this rank's until the cycle's agreement, then every rank's), its lists in bytes.
struct FusedOp : Call {
  std::string backend;  // as submitted ("auto" resolved per buffer)
  std::shared_ptr<WorkState> state;
  const std::byte* in_bytes() const { return static_cast<const std::byte*>(in); }
  std::byte* out_bytes() const { return static_cast<std::byte*>(out); }
};

// What a fused buffer holds: operations of one kind, backend, dtype, reduce op and root.
using BufferKey = std::tuple<CollectiveKind, std::string, DType, ReduceOp, int>;
// The buffer an operation goes into (packing.cpp).
BufferKey key_of(const FusedOp& p);

// The fused buffers (from a BufferPool: B bytes each, and wide ones of world x B bytes for the
// sides that hold a block per rank), and the fused operations in flight. Shared with the
// completion callbacks, which count operations in flight down.
struct FusionBuffers {
  std::size_t buffer_bytes;
  std::size_t world = 1;
  std::shared_ptr<BufferPool> pool;
  std::mutex mutex;
  std::condition_variable idle_cv;
  std::uint64_t in_flight = 0;  // fused buffers issued and not completed

  BufferPool::Buffer take(bool wide = false) { return pool->take(wide ? buffer_bytes * world : buffer_bytes); }
  void done() {
    {
      std::lock_guard lock(mutex);
      --in_flight;
    }
    idle_cv.notify_all();
  }
};

// What a cycle's ranks tell each other first (cycle.cpp): the minimum over the ranks of the
// operations queued, the least and most submitted in all, whether all or any are stopping.
struct CycleCounts {
  std::int64_t queued = 0, submitted_min = 0, submitted_max = 0;
  bool all_stop = false, any_stop = false;
};

// Each of `values` replaced by its minimum over the ranks of the fusion's control group (a
// maximum is minus the minimum of the negated value).
void least_over_ranks(const Communicator& control, std::int64_t* values, std::size_t n);

// The signature of a cycle's batch, compared across ranks (cycle.cpp).
std::uint64_t fusion_signature(const std::vector<FusedOp>& batch);

}  // namespace fusion_detail

struct Fusion::Impl {
  using FusedOp = fusion_detail::FusedOp;
  using FusionBuffers = fusion_detail::FusionBuffers;

  Runtime* runtime = nullptr;  // what every operation of this fusion runs on
  FusionOptions options;
  std::vector<std::string> backends;          // concrete backends of this Fusion
  std::map<std::string, std::string> groups;  // backend -> its fusion group
  std::string control;                        // the group the cycle's agreement runs on
  Communicator control_comm;                  // that group, resolved once
  // The fusion groups' communicators ("chorus-fusion0/gloo", "chorus-fusion0/gloo:ring"), each
  // resolved the first time a buffer goes there; the cycle thread's alone.
  std::map<std::string, Communicator> targets;
  const Communicator& target(const std::string& name);
  int world_rank = 0;  // = the rank in every group of this fusion
  std::shared_ptr<FusionBuffers> shared;

  mutable std::mutex mutex;
  std::condition_variable cv;       // the cycle thread waits for work
  std::condition_variable idle_cv;  // flush() waits for an empty queue
  std::deque<FusedOp> queue;
  std::size_t queued_bytes = 0;
  std::int64_t oldest_ns = 0;  // when the queue's first entry arrived
  bool stopping = false;
  bool start_now = false;      // a queued operation's caller waits for it: the cycle starts at once
  bool issuing = false;        // the cycle thread holds operations taken from the queue
  std::exception_ptr broken;   // the error that stopped the cycle thread
  std::vector<FusedOp> batch;  // the cycle thread's: operations taken from the queue, not yet issued
  Stats stats;
  std::thread thread;

  Work submit(FusedOp op, bool now);
  void run();
  void cycle_loop();
  std::uint64_t submitted_count() const;  // stats.ops
  void fail_unmatched(const fusion_detail::CycleCounts& counts, std::int64_t submitted_here);
  void agree_uneven_blocks();  // on `batch`
  void issue();                // `batch`, emptying it
  void issue_buffer(const std::string& backend, std::vector<FusedOp> ops);
  void issue_uneven(const std::string& target, std::vector<FusedOp> ops);
  static void fail(std::vector<FusedOp>& ops, const std::exception_ptr& error) {
    for (auto& p : ops) p.state->complete(error);
  }
};

}  // namespace chorus::rt
