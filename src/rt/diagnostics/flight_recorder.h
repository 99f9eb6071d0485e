#pragma once
// The flight recorder: every rank keeps, always on, a bounded ring of its last operations per
// lane of each communicator (which operation, its sequence number, backend and algorithm, dtype,
// count, root or peer, the layer that issued it, when it started and whether it ended), and
// knows where it is (running, in finalize). On an operation timeout, a communication failure,
// SIGUSR1 or a request (rt::dump_flight_record, chorus.dump()), the rank writes it all as JSON
// (flight_dump.h); `chorus doctor` reads the dumps of all ranks and says where they parted.
//
// A ring has one writer at a time, the thread that owns its lane (the caller on the inline path,
// the lane's thread on the queued one), so recording is a few plain stores and one read of the
// CPU's time-stamp counter. A dump may read while the lane writes: each entry is a seqlock (its
// version odd while written) whose fields are stored with release and loaded with acquire, so
// that a reader that sees a field's new value also sees the odd version after it (x86: plain
// moves; no fences, which ThreadSanitizer cannot follow).
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "rt/call.h"
#include "rt/diagnostics/beacon.h"
#include "rt/work.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace chorus::rt {

// The layer above the core that issued an operation (the API's own callers: kApi).
enum class FlightLayer : std::uint8_t { kApi, kPython, kTorch, kFusion, kCompression, kExecutor, kEnforcer };
const char* to_string(FlightLayer layer);

// The issuing thread's layer: set for a scope by the layers above the core (ScopedFlightLayer).
// Defined once in the runtime (not inline): a Python module built with hidden visibility would
// otherwise set a copy of its own that the runtime's shared library never reads.
extern thread_local constinit FlightLayer t_flight_layer;
struct ScopedFlightLayer {
  explicit ScopedFlightLayer(FlightLayer layer) : saved(t_flight_layer) { t_flight_layer = layer; }
  ~ScopedFlightLayer() { t_flight_layer = saved; }
  ScopedFlightLayer(const ScopedFlightLayer&) = delete;
  ScopedFlightLayer& operator=(const ScopedFlightLayer&) = delete;
  FlightLayer saved;
};

// Ticks of a clock cheap enough to read on every operation: the time-stamp counter where there
// is one (converted to CLOCK_MONOTONIC when dumped), else the monotonic clock in ns.
inline std::uint64_t flight_ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
#endif
}

enum class FlightState : std::uint32_t { kStarted = 0, kCompleted = 1, kFailed = 2 };
const char* to_string(FlightState state);

// One operation, 64 bytes.
struct alignas(64) FlightEntry {
  std::atomic<std::uint32_t> version{0};  // odd while being written
  std::atomic<std::uint32_t> state{0};    // FlightState
  std::atomic<std::uint32_t> kind{0};     // op | dtype << 8 | async << 16 | layer << 20
  std::atomic<std::int32_t> root_or_peer{-1};
  std::atomic<std::int64_t> seq{-1};  // collectives' sequence number; -1 for send and recv
  std::atomic<std::uint64_t> count{0}, bytes{0};
  std::atomic<std::uint64_t> started{0};    // flight_ticks()
  std::atomic<std::uint64_t> algorithm{0};  // as submission numbers it (0: the backend's own)
  std::atomic<std::uint64_t> step{0};       // the rank's training step (FlightRecorder::mark_step)
};
static_assert(sizeof(FlightEntry) == 64);

// The entry of the operation the calling thread runs (set by FlightRing::begin, cleared by end;
// null outside one or when not recording): what a backend that waits inside its library names
// in its "waiting" line (gloo). Defined once in the runtime, as t_flight_layer.
extern thread_local constinit const FlightEntry* t_flight_entry;

// A snapshot of one entry, read consistently.
struct FlightEntryCopy {
  FlightState state;
  CollectiveKind op;
  DType dtype;
  bool async;
  FlightLayer layer;
  int root = -1, peer = -1;
  std::int64_t seq;
  std::uint64_t count, bytes, started, algorithm, step;
};

// One lane's ring.
class FlightRing {
 public:
  // `capacity`: rounded up to a power of two; 0 records nothing. `slot`: the lane's slot of the
  // rank's beacon, or null; `shared`: other lanes count in it too. `step`: the rank's step
  // counter (FlightRecorder::mark_step), or null.
  FlightRing(std::size_t capacity, BeaconSlot* slot, bool shared, const std::atomic<std::uint64_t>* step = nullptr);

  // The lane's owner, as an operation starts: returns its entry (null when not recording).
  FlightEntry* begin(const Call& call, std::size_t algorithm, bool async, FlightLayer layer) {
    if (capacity_ == 0) return nullptr;
    const std::uint64_t n = operations_.load(std::memory_order_relaxed);
    FlightEntry& e = entries_[n & (capacity_ - 1)];
    const std::uint32_t v = e.version.load(std::memory_order_relaxed);
    e.version.store(v + 1, std::memory_order_relaxed);
    const bool collective = traits(call.op).collective;
    const std::int64_t seq =
        collective ? static_cast<std::int64_t>(collectives_.load(std::memory_order_relaxed)) : std::int64_t{-1};
    e.state.store(static_cast<std::uint32_t>(FlightState::kStarted), std::memory_order_release);
    e.kind.store(static_cast<std::uint32_t>(call.op) | static_cast<std::uint32_t>(call.dtype) << 8 |
                     static_cast<std::uint32_t>(async) << 16 | static_cast<std::uint32_t>(layer) << 20,
                 std::memory_order_release);
    e.root_or_peer.store(traits(call.op).rooted ? call.root : collective ? -1 : call.peer, std::memory_order_release);
    e.seq.store(seq, std::memory_order_release);
    e.count.store(call.count, std::memory_order_release);
    e.bytes.store(call.lists ? 0 : call.bytes(), std::memory_order_release);
    e.started.store(flight_ticks(), std::memory_order_release);
    e.algorithm.store(algorithm, std::memory_order_release);
    e.step.store(step_ != nullptr ? step_->load(std::memory_order_relaxed) : 0, std::memory_order_release);
    e.version.store(v + 2, std::memory_order_release);
    operations_.store(n + 1, std::memory_order_release);
    if (collective) collectives_.store(static_cast<std::uint64_t>(seq) + 1, std::memory_order_relaxed);
    if (slot_ != nullptr) count(slot_->started);
    t_flight_entry = &e;
    return &e;
  }
  // The same owner, as the operation ends.
  void end(FlightEntry* e, bool ok) {
    if (e == nullptr) return;
    t_flight_entry = nullptr;
    e->state.store(static_cast<std::uint32_t>(ok ? FlightState::kCompleted : FlightState::kFailed),
                   std::memory_order_release);
    if (slot_ != nullptr) count(slot_->ended);
  }

  std::size_t capacity() const { return capacity_; }
  std::uint64_t operations() const { return operations_.load(std::memory_order_acquire); }
  std::uint64_t collectives() const { return collectives_.load(std::memory_order_acquire); }
  // Any thread: the entries still in the ring, oldest first (an entry being rewritten is skipped).
  std::vector<FlightEntryCopy> snapshot() const;

 private:
  std::size_t capacity_;
  std::unique_ptr<FlightEntry[]> entries_;
  std::atomic<std::uint64_t> operations_{0}, collectives_{0};
  BeaconSlot* slot_;
  bool slot_shared_;
  const std::atomic<std::uint64_t>* step_;
  void count(std::atomic<std::uint64_t>& counter) const {
    if (slot_shared_)
      counter.fetch_add(1, std::memory_order_release);
    else
      counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
};

// Ends an operation's entry when the scope ends: failed, unless completed() was called.
struct FlightScope {
  FlightRing& ring;
  FlightEntry* entry;
  bool ok = false;
  void completed() { ok = true; }
  // Ends it failed now (before the failure is reported and dumped).
  void failed() {
    ring.end(entry, false);
    entry = nullptr;
  }
  ~FlightScope() { ring.end(entry, ok); }
};

// What a dump shows of one communicator: its lanes' rings and who its members are.
struct FlightCommunicatorView {
  std::string name, backend;
  std::vector<int> ranks;  // world ranks, in communicator-rank order
  int rank = 0, size = 1;
  std::vector<const FlightRing*> lanes;
  // The label of an entry's algorithm (CommunicatorState::label_of).
  std::function<std::string(CollectiveKind, std::uint64_t)> label_of;
};

// One rank's recorder: what every lane's ring needs (capacity, beacon slots), where the rank
// is, and its dumps. The runtime that owns it says which communicators a dump shows (source).
class FlightRecorder {
 public:
  struct Identity {
    std::string job;  // the run's id
    int rank = 0, world_size = 1;
  };
  // `capacity`: entries per lane (0: off). `beacon_dir`: where to map the rank's beacon ("" for
  // none). `dump_dir`: where dumps go ("": CHORUS_RT_DUMP's default, flight_dump.h).
  FlightRecorder(Identity identity, std::size_t capacity, const std::string& beacon_dir, std::string dump_dir);
  ~FlightRecorder();
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  std::size_t capacity() const { return capacity_; }
  // A ring for a new lane, with its beacon slot.
  std::unique_ptr<FlightRing> make_ring();

  void place(RankPlace p);
  RankPlace place() const { return static_cast<RankPlace>(place_.load(std::memory_order_acquire)); }

  // The program marks the end of a training step (rt::mark_step): the operations recorded after
  // it carry the next step number, so that the doctor can count each rank's calls per step.
  void mark_step() { step_.fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t step() const { return step_.load(std::memory_order_relaxed); }

  using Source = std::function<std::vector<FlightCommunicatorView>()>;
  // The runtime's communicators (under the runtime's lock), until detach().
  void set_source(Source source);
  void detach();

  // Writes the rank's record to `<dump dir>/rank-<rank>.json` (whole or not at all) and says so
  // on stderr; returns the path, or "" when it could not (said on stderr too; never throws).
  // `reason`: timeout, comm_error, disagreement, signal, python, request, abort, finalize (a
  // rank that has waited in finalize for its peers for a while).
  std::string dump(std::string_view reason, std::string_view detail) const;
  // dump() for the first failure of this rank only.
  void dump_failure(std::string_view reason, std::string_view detail);
  const std::string& dump_dir() const { return dump_dir_; }
  // This rank's clock offset to rank 0's and its error bound (rt/clock_offset.h), written into
  // every dump from then on (`clock_to_rank0_ns`, `clock_error_ns`): the runtime sets it at init
  // when it estimated one (with a communication log). An unknown one (error < 0) is not written.
  void set_clock_offset(std::int64_t to_rank0_ns, std::int64_t error_ns) {
    clock_to_rank0_ns_ = to_rank0_ns;
    clock_error_ns_ = error_ns;
  }

  // flight_ticks() values to CLOCK_MONOTONIC ns (the counter's rate measured since construction).
  struct TickScale {
    std::uint64_t tick0;
    std::int64_t ns0;
    double ns_per_tick;
    std::int64_t to_ns(std::uint64_t ticks) const;
  };
  TickScale tick_scale() const;

 private:
  Identity identity_;
  std::size_t capacity_;
  std::unique_ptr<Beacon> beacon_;
  std::string dump_dir_;
  std::int64_t clock_to_rank0_ns_ = 0, clock_error_ns_ = -1;  // set before any dump (init)
  std::atomic<std::int64_t> place_{0};
  std::atomic<std::int64_t> place_since_ns_{0};
  std::uint64_t tick0_ = 0;
  std::int64_t ns0_ = 0;
  mutable std::mutex mutex_;  // source_
  Source source_;
  std::atomic<bool> failure_dumped_{false};
  std::atomic<std::uint64_t> step_{0};  // steps marked so far
};

// Where a rank of run `job` dumps without CHORUS_RT_DUMP: $TMPDIR (or /tmp)/chorus-dumps/<job>.
std::string default_dump_dir(const std::string& job);

}  // namespace chorus::rt
