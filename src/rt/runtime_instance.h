#pragma once
// chorus::rt::Runtime: one instance of the runtime, what init() makes and finalize() ends. It
// owns the world, a CommunicatorState per backend and group, their progress lanes and the
// communication log, and issues every operation as one Call. The free functions of runtime.h
// are a facade over the process's default instance; tests run several instances in one process,
// one per rank, each on its own thread (tests/rt/backends/thread_ranks.h).
//
//   registry.cpp    names to communicators ("auto", "backend:algorithm", groups)
//   submission.cpp  validation, agreement, the lanes, the log: issue()
//   lifecycle.cpp   construction (init) and destruction (finalize: quiesce or leave)
//   groups.cpp      split, new_group, member_group
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rt/agreement.h"
#include "rt/backend.h"
#include "rt/buffer_pool.h"
#include "rt/backends/backends.h"
#include "rt/call.h"
#include "rt/checking.h"
#include "rt/comm_log.h"
#include "rt/diagnostics/flight_recorder.h"
#include "rt/progress_queue.h"
#include "rt/rendezvous/bootstrap.h"
#include "rt/runtime.h"
#include "rt/tuning_table.h"
#include "rt/work.h"

namespace chorus::rt {

// One backend instance (mpi, gloo or shm) over the world or a group: its progress lanes, how its
// ranks agree on calls, its named algorithms, and whether a failure left it unusable.
struct CommunicatorState {
  std::unique_ptr<Backend> backend;
  // Lane 0 runs collectives (and everything, if the backend cannot take concurrent calls);
  // lanes 1 and 2 run the application's sends and receives.
  struct Lane {
    std::unique_ptr<ProgressQueue> queue;
    std::shared_ptr<BackendActivity> activity;
    std::unique_ptr<FlightRing> ring;  // its last operations (diagnostics/flight_recorder.h)
  };
  Lane lanes[3];
  int lane_count = 1;
  Lane& lane_for(CollectiveKind op) {
    if (lane_count == 1) return lanes[0];
    return op == CollectiveKind::kSend ? lanes[1] : op == CollectiveKind::kRecv ? lanes[2] : lanes[0];
  }
  int world_size = 1;    // backend->size(), without a virtual call
  int rank = 0;          // backend->rank(), the same
  AgreementShape shape;  // for the digest exchange (agreement.h)
  // How this backend's ranks agree on each collective's call: on its own data path (none
  // here), by the runtime's digest exchange (agreement.h), or checking mode's full comparison.
  enum class Agreement { kNone, kDigest, kFull } agreement = Agreement::kNone;
  bool takes_avg = false;  // backend->takes_avg()
  // Agreement::kNone because the backend agrees on its own data path (shm): calls with a named
  // algorithm, which run outside that path, agree by digest all the same.
  bool agree_named = false;
  std::atomic<std::uint64_t> sequence{0};  // collectives issued
  std::atomic<bool> is_broken{false};      // a communication failure left the backend unusable
  bool broken_by_disagreement = false;     // that failure was a DisagreementError (guarded by broken_mutex)
  std::mutex broken_mutex;
  std::string broken;  // why (guarded by broken_mutex)
  // A group's errors name group ranks; this note (appended to them) maps them to world ranks.
  std::string group_note;
  std::string label;  // the backend's or group's name (communication log)
  // The rank's flight recorder: dumps on this backend's first failure. Shared: a broken backend
  // outlives the runtime.
  std::shared_ptr<FlightRecorder> recorder;
  // The backend's named algorithms per operation (Backend::algorithms, indexed by CollectiveKind) and
  // the labels the communication log gives operations run with them ("mpi:ring").
  std::array<std::vector<std::string>, std::size(kAllCollectiveKinds)> algorithms, algorithm_labels;
  const std::vector<std::string>& algorithms_of(CollectiveKind op) const {
    return algorithms[static_cast<std::size_t>(op)];
  }
  // The `algorithm` of a call that travels compressed (rt/compression/call_compression.h): its
  // compressed form, whatever algorithm the name chose; logged as "gloo:zfp".
  static constexpr std::size_t kCompressed = ~std::size_t{0};
  std::string compressed_label;
  // The label of an operation run with `algorithm` (0: the backend's own choice).
  const std::string& label_of(CollectiveKind op, std::size_t algorithm) const {
    if (algorithm == kCompressed) return compressed_label;
    return algorithm == 0 ? label : algorithm_labels[static_cast<std::size_t>(op)][algorithm - 1];
  }
  // The reduction the backend runs: avg as sum unless the backend takes avg.
  ReduceOp wire_op(ReduceOp op) const { return op == ReduceOp::avg && !takes_avg ? ReduceOp::sum : op; }
  // Marks the backend unusable for `why` (its first reason stays); true if this was the first.
  bool break_with(const std::string& why, bool disagreement) {
    std::lock_guard lock(broken_mutex);
    const bool first = broken.empty();
    if (first) {
      broken = why;
      broken_by_disagreement = disagreement;
    }
    is_broken.store(true, std::memory_order_release);
    return first;
  }
  // Whether calls with `algorithm` agree before they run (agreement.h, checking.h).
  bool agrees(std::size_t algorithm) const { return agreement != Agreement::kNone || (algorithm != 0 && agree_named); }
};

class Runtime {
 public:
  // What init() does: finds the world (InitOptions::world, else the environment) and sets up
  // `backends` (names, or auto / all).
  Runtime(const std::vector<std::string>& backends, const InitOptions& options);
  // What finalize() does (runtime.h).
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Issues `call` on the backend or group `name` ("auto", "backend:algorithm" for the
  // operations that take one): validated, agreed on, run inline or on the lane.
  // The inline path runs on the caller's Call; only a queued one is moved into its task.
  Work issue(std::string_view name, Call&& call, bool async_op);
  // The same on a communicator resolved once (runtime.h): no lookup of the name.
  Work issue(const Communicator& communicator, Call&& call, bool async_op);
  Communicator communicator(std::string_view name);
  // Tensor fusion as a layer of communicators (rt/fusion/fusion_layer.cpp). add_fusion is
  // collective over the world (every rank, in the same order, with the same arguments, while no
  // other operation of this runtime is being issued): a Fusion on `backends` (rt/fusion/fusion.h)
  // owned by this runtime, flushed and ended first thing in finalize, in reverse order of making.
  Fusion& add_fusion(const std::vector<std::string>& backends, const FusionOptions& options);
  // `name`'s communicator with `layers` (runtime.h's CommunicatorLayers, rt/communicator_layers.cpp):
  // calls go through the compression policy, then the fusion takes what it fuses (a fusion of this
  // runtime's, running on name's backend; for "auto", on every backend). Not collective. `name`
  // may be "auto" when there are layers; not a group when there is a fusion.
  Communicator communicator(std::string_view name, const CommunicatorLayers& layers);
  Communicator communicator(std::string_view name, Fusion& fusion) { return communicator(name, {nullptr, &fusion}); }
  // Both: a fusion of its own on name's backend (all of them for "auto"). Collective.
  Communicator communicator(std::string_view name, const FusionOptions& options);

  int rank(std::string_view name);
  int size(std::string_view name);
  const std::vector<std::string>& backends() const { return order_; }
  std::string resolve_backend(std::string_view name, CollectiveKind op, std::size_t bytes);
  std::vector<std::string> algorithm_names(std::string_view name, CollectiveKind op);
  bool is_native(std::string_view name, CollectiveKind op);
  const TuningTable* tuning_table() const { return tuning_ ? &*tuning_ : nullptr; }
  void synchronize(const std::vector<std::string>& names);

  void split(const std::string& name, std::string_view backend, int color, int key);
  void new_group(const std::string& name, const std::vector<int>& ranks, std::string_view backend);
  void member_group(const std::string& name, const std::vector<int>& world_ranks, std::string_view backend);
  std::vector<int> group_ranks(std::string_view name);
  // The number of the next instance of `layer` ("fusion", "compressor") built on this runtime:
  // 0, 1, 2, ... per layer. The layers above the core name their groups with it, so ranks that
  // build their instances in the same order name the same groups, whatever other runtimes of
  // the process (thread ranks) do.
  int next_instance(std::string_view layer);
  // Its operation timeout (InitOptions::timeout_s, CHORUS_RT_TIMEOUT_S; default 300 s).
  std::int64_t timeout_ms() const { return timeout_ms_; }
  // Staging buffers for front ends that copy through memory of their own (the Python module's
  // list forms), with the pool's default limits; thread-safe.
  BufferPool& staging_pool() const { return *staging_; }
  // Writes this rank's flight record now (reason "request", or "python"); returns its path ("" if
  // it could not be written: said on stderr).
  std::string dump_flight_record(std::string_view reason);
  // rt::mark_step (runtime.h): the flight record's next step.
  void mark_step() { recorder_->mark_step(); }
  // rt::abort (runtime.h): every communicator unusable, naming `why`; shm's waits end; the
  // rank's flight record written (reason abort) and its failure published for its peers.
  void abort(std::string_view why);

 private:
  // The hot path: a linear scan of the few names beats a map lookup. `algorithm` (operations
  // that take one, and rank/size lookups as barrier): 0 for the backend's own choice, else 1 +
  // the index of a named algorithm ("mpi:ring", or "auto" choosing one from the tuning table).
  CommunicatorState& find(std::string_view name, CollectiveKind op, std::size_t bytes,
                          std::size_t* algorithm = nullptr);
  CommunicatorState& find_slow(std::string_view name, CollectiveKind op, std::size_t bytes, std::size_t* algorithm);
  std::string pick_backend(CollectiveKind op, std::size_t bytes) const;
  // communicator(name, layers)'s checks of its fusion (rt/communicator_layers.cpp).
  void check_fusion_of(std::string_view name, const Fusion& fusion, const CommunicatorState& state);
  bool is_world_backend(const Communicator& c);  // not a group
  // Issues `call` on `c` with `algorithm` (0, 1 + a named one's index, or kCompressed).
  Work submit(CommunicatorState& c, std::size_t algorithm, Call&& call, bool async_op);
  Work enqueue(CommunicatorState& c, CommunicatorState::Lane& lane, std::size_t algorithm, ReduceOp wire, Call&& call,
               std::optional<CallSignature>&& sig, bool async_op);
  std::unique_ptr<CommunicatorState> make_communicator(const std::string& kind, const std::string& label,
                                                       const BackendContext& ctx) const;
  BackendContext world_context(const std::string& key_prefix, std::vector<int> world_ranks = {}) const;
  void add_group(const std::string& name, const std::string& kind, std::vector<int> world_ranks,
                 const std::string& key_prefix, int color, int key);
  void check_group_name(const std::string& name, const std::string& where) const;
  std::string group_key_base(const char* kind, const std::string& name) const;
  void finalize();
  bool quiesce(std::chrono::steady_clock::time_point deadline, bool broken) const;
  void leave_without_waiting(const std::string& failure) const;
  bool serves_last_reads(const std::string& key, std::chrono::steady_clock::time_point until,
                         const std::function<void()>& progress) const;

  World world_;
  std::map<std::string, std::unique_ptr<CommunicatorState>> communicators_;  // backends and groups, by name
  std::vector<std::string> order_;                                           // initialised backends in preference order
  std::vector<std::string> groups_;                                          // groups of this rank, in creation order
  std::map<std::string, std::vector<int>, std::less<>> members_;             // group -> world ranks
  std::vector<std::string> not_member_;                         // groups created while this rank joined none
  std::map<std::string, int, std::less<>> instances_;           // next_instance's counts, by layer (under mutex_)
  std::vector<std::unique_ptr<Fusion>> fusions_;                // add_fusion's, in order of making (under mutex_)
  std::shared_ptr<BufferPool> staging_ = BufferPool::make({});  // staging_pool()
  // The same names, for the lookup on every call: append-only and lock-free, so that a thread
  // issuing operations (tensor fusion's cycle thread) may look names up while another creates a
  // group. Names past its capacity are found through `communicators_` under `mutex_`.
  struct FastIndex {
    static constexpr std::size_t kCapacity = 64;
    std::array<std::pair<std::string, CommunicatorState*>, kCapacity> entries;
    std::atomic<std::size_t> count{0};
    void add(const std::string& name, CommunicatorState* c) {  // one writer at a time (mutex_)
      const std::size_t n = count.load(std::memory_order_relaxed);
      if (n == kCapacity) return;
      entries[n] = {name, c};
      count.store(n + 1, std::memory_order_release);
    }
  } fast_;
  std::mutex mutex_;                  // guards `communicators_` against a group created while another thread looks up
  int generation_ = 0;                // this runtime's number among its rank's runtimes on this run (store keys)
  std::int64_t timeout_ms_ = 300000;  // timeout_ms()
  bool check_ = false;
  bool agree_ = true;  // InitOptions::agree
  std::optional<TuningTable> tuning_;
  // Null: not logging. Shared with queued operations: a broken backend left alive by finalize()
  // may still end one after the runtime is gone.
  std::shared_ptr<CommLog> log_;
  // Every rank's flight recorder (always on unless CHORUS_RT_RECORD=0). Shared with the
  // communicators (their failure dumps).
  std::shared_ptr<FlightRecorder> recorder_;
  // Set by abort(); the backends' waits read it (BackendContext::aborted).
  std::shared_ptr<AbortMark> aborted_ = std::make_shared<AbortMark>();
  std::atomic<bool> aborting_{false};  // abort() runs once
  std::vector<FlightCommunicatorView> flight_views();
  // Held only here: the communicators handed out (runtime.h) see it expire when this runtime ends.
  std::shared_ptr<const int> alive_ = std::make_shared<const int>(0);
};

// The process's default runtime: what init() made (runtime.h's functions run on it); InputError
// naming `what` when there is none.
Runtime& default_runtime(std::string_view what);

// Backend names are 3-4 bytes: a constant-length memcmp compiles to two loads and a compare,
// where std::string's operator== calls memcmp.
inline bool same_name(const std::string& a, std::string_view b) {
  const std::size_t n = b.size();
  if (a.size() != n) return false;
  if (n == 3) return std::memcmp(a.data(), b.data(), 3) == 0;
  if (n == 4) return std::memcmp(a.data(), b.data(), 4) == 0;
  return std::memcmp(a.data(), b.data(), n) == 0;
}

[[gnu::always_inline]] inline CommunicatorState& Runtime::find(std::string_view name, CollectiveKind op,
                                                               std::size_t bytes, std::size_t* algorithm) {
  const std::size_t n = fast_.count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i)
    if (same_name(fast_.entries[i].first, name)) return *fast_.entries[i].second;
  return find_slow(name, op, bytes, algorithm);
}

// The backends a runtime can set up, in the default preference order for "auto".
inline const std::vector<std::string>& known_backends() {
  static const std::vector<std::string> kKnown = {"shm", "mpi", "gloo"};
  return kKnown;
}

}  // namespace chorus::rt
