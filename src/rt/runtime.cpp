// The runtime front: backend registry, per-backend queues, argument validation, checking mode,
// "auto" resolution, avg finishing. Backends see only validated, agreed calls.
#include "rt/runtime.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "core/error.h"
#include "rt/backends/backends.h"
#include "rt/rendezvous/bootstrap.h"
#include "rt/agreement.h"
#include "rt/checking.h"
#include "rt/comm_log.h"
#include "rt/dtype.h"
#include "rt/errors.h"
#include "rt/rendezvous/mpi_env.h"
#include "rt/progress_queue.h"
#include "rt/runtime_config.h"
#include "rt/tuning_table.h"

namespace chorus::rt {

namespace {

struct Slot {
  std::unique_ptr<Backend> backend;
  // Lane 0 runs collectives (and everything, if the backend cannot take concurrent calls);
  // lanes 1 and 2 run the application's sends and receives.
  struct Lane {
    std::unique_ptr<ProgressQueue> queue;
    std::shared_ptr<BackendActivity> activity;
  };
  Lane lanes[3];
  int lane_count = 1;
  Lane& lane_for(OpKind op) {
    if (lane_count == 1) return lanes[0];
    return op == OpKind::send ? lanes[1] : op == OpKind::recv ? lanes[2] : lanes[0];
  }
  int world_size = 1;                      // backend->size(), without a virtual call
  // How this backend's ranks agree on each collective's call: on its own data path (none
  // here), by the runtime's digest exchange (agreement.h), or checking mode's full comparison.
  enum class Agreement { none, digest, full } agreement = Agreement::none;
  bool takes_avg = false;                  // backend->takes_avg()
  // Agreement::none because the backend agrees on its own data path (shm): calls with a named
  // algorithm, which run outside that path, agree by digest all the same.
  bool agree_named = false;
  std::atomic<std::uint64_t> sequence{0};  // collectives issued with a signature
  std::atomic<bool> is_broken{false};      // a communication failure left the backend unusable
  bool broken_by_disagreement = false;     // that failure was a DisagreementError (guarded by broken_mutex)
  std::mutex broken_mutex;
  std::string broken;                      // why (guarded by broken_mutex)
  // A group's errors name group ranks; this note (appended to them) maps them to world ranks.
  std::string group_note;
  std::string label;  // the backend's or group's name (communication log)
  // The backend's named algorithms per operation (Backend::algorithms, indexed by OpKind) and
  // the labels the communication log gives operations run with them ("mpi:ring").
  std::array<std::vector<std::string>, std::size(kAllOpKinds)> algorithms, algorithm_labels;
  const std::vector<std::string>& algorithms_of(OpKind op) const { return algorithms[static_cast<std::size_t>(op)]; }
  // The label of an operation run with `algorithm` (0: the backend's own choice).
  const std::string& label_of(OpKind op, std::size_t algorithm) const {
    return algorithm == 0 ? label : algorithm_labels[static_cast<std::size_t>(op)][algorithm - 1];
  }
};

struct Runtime {
  World world;
  std::map<std::string, std::unique_ptr<Slot>> slots;  // backends and groups, by name
  std::vector<std::string> order;  // initialised backends in preference order
  std::vector<std::string> groups;  // groups of this rank, in creation order
  std::map<std::string, std::vector<int>, std::less<>> members;  // group -> world ranks
  std::vector<std::string> not_member;  // groups created while this rank joined none
  // The same, for the lookup on every call: append-only and lock-free, so that a thread issuing
  // operations (tensor fusion's cycle thread) may look names up while another creates a group.
  // Names past its capacity are found through `slots` under `slots_mutex`.
  struct FastIndex {
    static constexpr std::size_t kCapacity = 64;
    std::array<std::pair<std::string, Slot*>, kCapacity> entries;
    std::atomic<std::size_t> count{0};
    void add(const std::string& name, Slot* slot) {  // one writer at a time (slots_mutex)
      const std::size_t n = count.load(std::memory_order_relaxed);
      if (n == kCapacity) return;
      entries[n] = {name, slot};
      count.store(n + 1, std::memory_order_release);
    }
  } fast;
  std::mutex slots_mutex;  // guards `slots` against a group created while another thread looks up
  int generation = 0;  // this init()'s number in the process (store keys of finalize())
  bool check = false;
  bool agree = true;  // InitOptions::agree
  std::optional<TuningTable> tuning;
  // Null: not logging. Shared with queued operations: a broken backend left alive by finalize()
  // may still end one after the runtime is gone.
  std::shared_ptr<CommLog> log;
};

Runtime* g_rt = nullptr;
// Counts init() calls in this process (the same on every rank): keeps the store keys of a
// second init/finalize cycle apart from the first one's under the same launcher.
int g_generation = 0;

const std::vector<std::string> kAvailable = {"shm", "mpi", "gloo"};

Runtime& rt(std::string_view what) {
  if (g_rt == nullptr)
    throw InputError(std::string(what), "the runtime is not initialised (call chorus::rt::init first)");
  return *g_rt;
}

bool uniform_bytes_op(OpKind op) {
  switch (op) {
    case OpKind::send: case OpKind::recv: case OpKind::all_to_all: case OpKind::all_gatherv:
    case OpKind::gatherv: case OpKind::scatterv: case OpKind::all_to_allv:
      return false;
    default:
      return true;
  }
}

std::string pick_backend(Runtime& r, OpKind op, std::size_t bytes) {
  // Vector forms and point-to-point have no rank-uniform size, so they use the default;
  // every rank must pick the same backend.
  if (r.tuning && uniform_bytes_op(op))
    if (auto b = r.tuning->pick(op, r.world.size, bytes, r.order)) return *b;
  return r.order.front();
}

// Backend names are 3-4 bytes: a constant-length memcmp compiles to two loads and a compare,
// where std::string's operator== calls memcmp.
inline bool same_name(const std::string& a, std::string_view b) {
  const std::size_t n = b.size();
  if (a.size() != n) return false;
  if (n == 3) return std::memcmp(a.data(), b.data(), 3) == 0;
  if (n == 4) return std::memcmp(a.data(), b.data(), 4) == 0;
  return std::memcmp(a.data(), b.data(), n) == 0;
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_not_initialised(OpKind op) {
  rt(to_string(op));
  throw std::logic_error("unreachable");
}

Slot& slot_for_slow(std::string_view name, OpKind op, std::size_t bytes, std::size_t* algorithm = nullptr);

// The hot path: a linear scan of the few names beats a map lookup.
// `algorithm` (the operations that take_algorithm(), and rank/size lookups as barrier): set to
// 0 for the backend's own choice, else 1 + the index of a named algorithm ("mpi:ring", or
// "auto" choosing one from the tuning table).
[[gnu::always_inline]] inline Slot& slot_for(std::string_view name, OpKind op, std::size_t bytes,
                                             std::size_t* algorithm = nullptr) {
  if (g_rt == nullptr) [[unlikely]] throw_not_initialised(op);
  const std::size_t n = g_rt->fast.count.load(std::memory_order_acquire);
  for (std::size_t i = 0; i < n; ++i)
    if (same_name(g_rt->fast.entries[i].first, name)) return *g_rt->fast.entries[i].second;
  return slot_for_slow(name, op, bytes, algorithm);
}

// "auto", names with an algorithm, and unknown names.
Slot& slot_for_slow(std::string_view name, OpKind op, std::size_t bytes, std::size_t* algorithm) {
  Runtime& r = rt(to_string(op));
  std::lock_guard lock(r.slots_mutex);
  // A name with an algorithm: the exact name first (group names may hold ':'), else the part
  // before the last ':' names the backend or group, the rest the algorithm.
  std::string base = name == "auto" ? pick_backend(r, op, bytes) : std::string(name);
  std::string named;
  if (const auto colon = base.rfind(':'); colon != std::string::npos && r.slots.count(base) == 0) {
    named = base.substr(colon + 1);
    base.resize(colon);
  }
  auto it = r.slots.find(base);
  if (it == r.slots.end() && std::find(r.not_member.begin(), r.not_member.end(), base) != r.not_member.end())
    throw InputError(fmt::format("{} on rank {}", to_string(op), r.world.rank),
                     fmt::format("this rank is not a member of group '{}'", base));
  if (it != r.slots.end() && !named.empty()) {
    const std::string where = fmt::format("{} on rank {}", to_string(op), r.world.rank);
    if (algorithm == nullptr)
      throw InputError(where, fmt::format("'{}': {} takes no algorithm after the backend name (those that do: {})", name,
                                          to_string(op), kAlgorithmOps));
    // rank() and size() (as barrier) accept a name with any operation's algorithm.
    std::vector<std::string> names = it->second->algorithms_of(op);
    if (op == OpKind::barrier)
      for (const auto& list : it->second->algorithms) names.insert(names.end(), list.begin(), list.end());
    const auto a = std::find(names.begin(), names.end(), named);
    if (named == "default") {
      *algorithm = 0;
    } else if (a == names.end()) {
      throw InputError(where, fmt::format("'{}': {} has no {} algorithm '{}' (it has: default{}{})", name, base, to_string(op),
                                          named, names.empty() ? "" : ", ", fmt::join(names, ", ")));
    } else {
      *algorithm = op == OpKind::barrier ? 0 : static_cast<std::size_t>(a - names.begin()) + 1;
    }
  }
  if (it == r.slots.end()) {
    const bool known = std::find(kAvailable.begin(), kAvailable.end(), base) != kAvailable.end();
    throw InputError(fmt::format("{} on rank {}", to_string(op), r.world.rank),
                     known ? fmt::format("backend '{}' is not initialised (initialised: {})", name,
                                         fmt::join(r.order, ", "))
                           : fmt::format("unknown backend '{}' (available: {}, auto; initialised: {})",
                                         name, fmt::join(kAvailable, ", "), fmt::join(r.order, ", ")));
  }
  return *it->second;
}

std::string where(const Backend& b, OpKind op) {
  return fmt::format("{} on {}, rank {}", to_string(op), b.name(), b.rank());
}

template <typename Message>
[[noreturn, gnu::cold, gnu::noinline]] void input_error(const Backend& b, OpKind op, Message& what) {
  throw InputError(where(b, op), what());
}

// `what` is a callable giving the message: formatted only on failure (this is the hot path),
// out of line so the check itself inlines to a compare and a branch.
template <typename Message>
inline void require(bool ok, const Backend& b, OpKind op, Message&& what) {
  if (!ok) [[unlikely]] input_error(b, op, what);
}

void require_root(const Backend& b, OpKind op, int root) {
  require(root >= 0 && root < b.size(), b, op, [&] { return fmt::format("root {} is not a rank of this world (size {})", root, b.size()); });
}

inline void require_buffer(const Backend& b, OpKind op, const void* p, std::size_t count, const char* name) {
  require(count == 0 || p != nullptr, b, op, [&] { return fmt::format("{} is null but count is {}", name, count); });
}

void require_counts(const Backend& b, OpKind op, const Counts& v, const char* name) {
  require(v.size() == static_cast<std::size_t>(b.size()), b, op, [&] { return fmt::format("{} has {} entries; the world has {} ranks", name, v.size(), b.size()); });
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_broken(Slot& s) {
  std::lock_guard lock(s.broken_mutex);
  throw CommError(fmt::format("backend {} is unusable after an earlier failure: {}",
                              s.backend->name(), s.broken));
}

[[gnu::cold, gnu::noinline]] void mark_broken(Slot& s, const CommError& e) {
  std::lock_guard lock(s.broken_mutex);
  if (s.broken.empty()) {
    s.broken = e.what();
    s.broken_by_disagreement = dynamic_cast<const DisagreementError*>(&e) != nullptr;
  }
  s.is_broken.store(true, std::memory_order_release);
}

// Rethrows a group's failure with its ranks mapped to world ranks (same exception type).
[[noreturn, gnu::cold, gnu::noinline]] void rethrow_in_group(const Slot& s, const CommError& e) {
  const std::string what = std::string(e.what()) + " " + s.group_note;
  if (dynamic_cast<const TimeoutError*>(&e) != nullptr) throw TimeoutError(what);
  if (dynamic_cast<const DisagreementError*>(&e) != nullptr) throw DisagreementError(what);
  throw CommError(what);
}

// Runs one operation on the slot's backend (on whichever thread owns the lane): refuses a
// broken backend, agrees on the call first (`sig` non-null: the slot's Agreement), and marks
// the backend broken on a communication failure.
template <typename Body>
[[gnu::always_inline]] inline void run_op(Slot& s, const CallSignature* sig, Body& body) {
  if (s.is_broken.load(std::memory_order_acquire)) [[unlikely]] throw_broken(s);
  try {
    if (sig != nullptr) {
      if (s.agreement == Slot::Agreement::full) check_agreement(*s.backend, *sig);
      else if (agree(*s.backend, *sig)) return;  // the exchange carried the call itself
    }
    body(*s.backend);
  } catch (const CommError& e) {
    mark_broken(s, e);
    if (!s.group_note.empty() && std::string_view(e.what()).find(s.group_note) == std::string_view::npos)
      rethrow_in_group(s, e);
    throw;
  }
}

// Issues `body` on the slot: inline when synchronous and idle, else through the queue. With a
// communication log, the operation's issue, start and end times are recorded.
// `label`: the name the communication log gives the operation (the slot's, or "mpi:ring").
template <typename Body>
Work submit_as(const std::string& label, Slot& s, OpKind op, std::size_t count, DType dtype, bool async_op,
               std::optional<CallSignature> sig, Body body) {
  // Agree first when the slot does, and on shm for a named algorithm too: those run on the
  // runtime's point-to-point algorithms, outside shm's own signature check.
  const bool check = sig.has_value() && (s.agreement != Slot::Agreement::none || (sig->named_algorithm && s.agree_named));
  CommLog* log = g_rt->log.get();
  const std::int64_t issue = log != nullptr ? steady_now_ns() : 0;
  // Issuing from several threads onto one backend is allowed, but their relative order is
  // then up to the application (all ranks must agree on it).
  // Only collectives are numbered: point-to-point traffic legitimately differs between ranks.
  if (sig) sig->sequence = s.sequence.fetch_add(1, std::memory_order_relaxed);
  Slot::Lane& lane = s.lane_for(op);
  if (!async_op && lane.queue->try_claim()) {
    // Synchronous on an idle lane: run here, no task object, no copies of the signature.
    struct Release {
      ProgressQueue& queue;
      ~Release() { queue.release(); }
    } release{*lane.queue};
    if (log == nullptr) [[likely]] {
      run_op(s, check ? &*sig : nullptr, body);
      return Work();
    }
    try {
      run_op(s, check ? &*sig : nullptr, body);
    } catch (...) {
      log->record(label, {op, count, dtype, async_op, false, issue, issue, steady_now_ns()});
      throw;
    }
    log->record(label, {op, count, dtype, async_op, true, issue, issue, steady_now_ns()});
    return Work();
  }
  auto state = std::make_shared<WorkState>(
      fmt::format("rank {}: {} on {} ({} x {})", s.backend->rank(), to_string(op),
                  s.backend->name(), count, to_string(dtype)),
      lane.activity, lane.queue.get());
  lane.queue->post([state, &s, check, sig = std::move(sig), body = std::move(body),
                    activity = lane.activity, log = log != nullptr ? g_rt->log : nullptr, label = &label, op, count, dtype, async_op, issue]() mutable {
    const auto start = steady_now_ns();
    activity->running_since_ns.store(start);
    try {
      run_op(s, check ? &*sig : nullptr, body);
    } catch (...) {
      activity->running_since_ns.store(0);
      if (log != nullptr) log->record(*label, {op, count, dtype, async_op, false, issue, start, steady_now_ns()});
      state->complete(std::current_exception());
      return;
    }
    activity->running_since_ns.store(0);
    if (log != nullptr) log->record(*label, {op, count, dtype, async_op, true, issue, start, steady_now_ns()});
    state->complete(nullptr);
  });
  Work w(state);
  if (!async_op) w.wait();
  return w;
}

template <typename Body>
Work submit(Slot& s, OpKind op, std::size_t count, DType dtype, bool async_op, std::optional<CallSignature> sig,
            Body body) {
  return submit_as(s.label, s, op, count, dtype, async_op, std::move(sig), std::move(body));
}

// The signature of a call whose ranks all pass `count` (null when the slot does not agree on
// calls); `in` and `out` (a broadcast's buffer is `out`) let the agreement exchange carry a
// small call with the default algorithm (`algorithm` 0) itself.
inline std::optional<CallSignature> uniform_sig(const Slot& slot, OpKind op, std::size_t count, DType dtype,
                                                ReduceOp rop, int root, const void* in, void* out,
                                                std::size_t algorithm = 0) {
  if (slot.agreement == Slot::Agreement::none && (algorithm == 0 || !slot.agree_named)) return std::nullopt;
  CallSignature s;
  s.op = op;
  s.count = count;
  s.dtype = dtype;
  s.reduce_op = rop;
  s.root = root;
  s.in = in;
  s.out = out;
  s.may_inline = algorithm == 0;
  s.named_algorithm = algorithm != 0;
  return s;
}

// The reduction the backend runs: avg as sum unless the backend takes avg (Backend::takes_avg).
ReduceOp wire_op(const Slot& s, ReduceOp op) { return op == ReduceOp::avg && !s.takes_avg ? ReduceOp::sum : op; }

// A backend instance of kind `kind` (mpi, gloo, shm) with its progress lanes.
std::unique_ptr<Slot> make_slot(const std::string& kind, const std::string& label, const BackendContext& ctx,
                                bool check, bool agree) {
  auto slot = std::make_unique<Slot>();
  slot->label = label;
  if (kind == "mpi") slot->backend = make_mpi_backend(ctx);
  else if (kind == "gloo") slot->backend = make_gloo_backend(ctx);
  else slot->backend = make_shm_backend(ctx);
  slot->world_size = slot->backend->size();
  slot->takes_avg = slot->backend->takes_avg();
  if (slot->world_size > 1)
    slot->agreement = check ? Slot::Agreement::full
                      : slot->backend->agrees_on_data_path() || !agree ? Slot::Agreement::none
                                                                      : Slot::Agreement::digest;
  slot->agree_named = slot->agreement == Slot::Agreement::none && slot->world_size > 1 && agree && !check;
  for (OpKind op : kAllOpKinds) {
    if (!takes_algorithm(op)) continue;
    const auto i = static_cast<std::size_t>(op);
    slot->algorithms[i] = slot->backend->algorithms(op);
    for (const auto& a : slot->algorithms[i]) slot->algorithm_labels[i].push_back(label + ":" + a);
  }
  slot->lane_count = slot->backend->concurrent_point_to_point() ? 3 : 1;
  static const char* kLaneNames[3] = {"", "-send", "-recv"};
  for (int l = 0; l < slot->lane_count; ++l) {
    slot->lanes[l].activity = std::make_shared<BackendActivity>();
    slot->lanes[l].activity->backend = label;
    slot->lanes[l].queue = std::make_unique<ProgressQueue>(label + kLaneNames[l]);
  }
  return slot;
}

// Where finalize() of a broken runtime publishes the rank's first failure, for its peers.
std::string failure_key(const std::string& run_id, int generation, int world_rank) {
  return fmt::format("{}/{}/failed/{}", run_id, generation, world_rank);
}

// BackendContext::failure_of for a backend whose rank j is world rank world_ranks[j] (empty:
// the world itself). Holds the store weakly: a broken backend outlives the runtime.
std::function<std::string(int)> failure_lookup(const Runtime& r, std::vector<int> world_ranks) {
  return [store = std::weak_ptr<Store>(r.world.store), run_id = r.world.run_id, generation = r.generation,
          world_ranks = std::move(world_ranks)](int rank) -> std::string {
    const auto s = store.lock();
    if (!s || rank < 0 || (!world_ranks.empty() && rank >= static_cast<int>(world_ranks.size()))) return {};
    const int world_rank = world_ranks.empty() ? rank : world_ranks[static_cast<std::size_t>(rank)];
    try {
      return s->get_string(failure_key(run_id, generation, world_rank), std::chrono::milliseconds(20));
    } catch (const std::exception&) {
      return {};  // it published nothing (killed, or ended without finalize()), or the store is gone
    }
  };
}

BackendContext world_context(const Runtime& r, const std::string& key_prefix) {
  BackendContext ctx;
  ctx.rank = r.world.rank;
  ctx.size = r.world.size;
  ctx.store = r.world.store.get();
  ctx.key_prefix = key_prefix;
  ctx.single_host = r.world.single_host;
  ctx.gloo_host = r.world.gloo_host;
  ctx.timeout = std::chrono::milliseconds(operation_timeout_ms());
  ctx.failure_of = failure_lookup(r, {});
  return ctx;
}

std::string finalize_key(const World& world, int generation) {
  return fmt::format("{}/{}/finalize", world.run_id, generation);
}

// finalize()'s barrier over the world's store. The rank that serves the store (rank 0 under
// mpirun) also waits until every rank has read the barrier's outcome before it stops serving.
// While it waits, the backends progress what this rank still owes its peers (Backend::progress:
// a peer may still be inside an operation that needs it). A rank that waits long says for
// whom, every `report_every` (a twentieth of the operation timeout, between 1 and 10 s). A
// failure here (a peer gone, the deadline passed) is reported, naming the ranks that never
// came, not thrown: finalize() goes on. The lanes are stopped and idle (finalize() checks):
// nothing else calls the backends now.
void quiesce(const Runtime& r, std::chrono::steady_clock::time_point deadline) {
  const World& world = r.world;
  if (world.size <= 1 || !world.store) return;
  const std::string key = finalize_key(world, r.generation);
  const auto progress = [&] {
    for (const auto& [name, s] : r.slots)
      if (s) s->backend->progress();  // (a slot left to a broken backend is gone from here)
  };
  try {
    const auto left = [&] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    };
    const auto report_every = std::clamp(std::chrono::milliseconds(operation_timeout_ms() / 20),
                                         std::chrono::milliseconds(1000), std::chrono::milliseconds(10000));
    world.store->barrier_naming(
        key, world.size, world.rank, std::max(left(), std::chrono::milliseconds(1)), report_every,
        [&](const std::vector<int>& missing, std::chrono::milliseconds waited) {
          std::fprintf(stderr, "chorus rt: finalize on rank %d: waited %.0f s for rank(s) %s to reach finalize (gives up in %.0f s)\n",
                       world.rank, static_cast<double>(waited.count()) / 1000.0, rank_list(missing).c_str(),
                       static_cast<double>(left().count()) / 1000.0);
        },
        progress);
    world.store->add(key + "/left", 1);
    if (world.server)
      while (world.store->add(key + "/left", 0) < world.size) {
        if (left().count() <= 0) throw TimeoutError("ranks still reading the finalize barrier at the deadline");
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        progress();
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chorus rt: finalize on rank %d: the ranks did not all reach finalize (%s); tearing down anyway\n",
                 world.rank, e.what());
  }
}

// A broken runtime does not wait for its peers (they may be gone), but it counts itself in
// finalize()'s barrier, arrived and left, so that its healthy peers go on at once instead of
// waiting for it until their deadline (the operation timeout and 10 s more).
void leave_without_waiting(const World& world, int generation, const std::string& failure) {
  if (world.size <= 1 || !world.store) return;
  const std::string key = finalize_key(world, generation);
  try {
    // Why this rank is ending, for a peer that finds it gone (BackendContext::failure_of).
    if (!failure.empty()) world.store->set_string(failure_key(world.run_id, generation, world.rank), failure.substr(0, 400));
    world.store->arrive(key, world.rank);
    world.store->add(key + "/left", 1);
  } catch (const std::exception& e) {
    // The store went with the failure (its server was a peer that died): the peers can learn
    // nothing more from it either.
    std::fprintf(stderr, "chorus rt: finalize on rank %d: could not tell the peers (%s)\n", world.rank, e.what());
  }
}

}  // namespace

std::vector<std::string> available_backends() { return kAvailable; }

void init(const std::vector<std::string>& names, const InitOptions& options) {
  if (g_rt != nullptr) throw InputError("init", "the runtime is already initialised");
  if (names.empty()) throw InputError("init", fmt::format("no backends given (available: {})", fmt::join(kAvailable, ", ")));
  std::vector<std::string> wanted;
  // "auto" / "all": every backend that can work under the current launcher (mpi needs mpirun
  // when there is more than one rank; shm needs one host, checked after the bootstrap).
  bool expanded = false;
  const char* launched_ws = std::getenv("CHORUS_WORLD_SIZE");
  // Several ranks not started by mpirun (chorus launch, or a caller's world such as torchrun's).
  const bool launch_only = !launched_by_mpirun() &&
                           ((std::getenv("CHORUS_RANK") != nullptr && launched_ws != nullptr && std::string(launched_ws) != "1") ||
                            (options.world != nullptr && options.world->size > 1));
  for (const auto& n : names) {
    if (n == "auto" || n == "all") {
      expanded = true;
      for (const auto& a : kAvailable)
        if (!(a == "mpi" && launch_only)) wanted.push_back(a);
      continue;
    }
    if (std::find(kAvailable.begin(), kAvailable.end(), n) == kAvailable.end())
      throw InputError("init", fmt::format("unknown backend '{}' (available: {})", n, fmt::join(kAvailable, ", ")));
    wanted.push_back(n);
  }
  // Preference order for "auto" and de-duplication.
  std::vector<std::string> ordered;
  for (const auto& a : kAvailable)
    if (std::find(wanted.begin(), wanted.end(), a) != wanted.end()) ordered.push_back(a);

  // -1 (exactly: the default) means "not set"; any other value must be a valid timeout.
  std::int64_t timeout_ms = 300000;
  if (options.timeout_s != -1.0) {
    timeout_ms = timeout_ms_from_seconds(options.timeout_s, "init: InitOptions::timeout_s");
  } else if (const char* env = std::getenv("CHORUS_RT_TIMEOUT_S")) {
    timeout_ms = timeout_ms_from_text(env, "environment CHORUS_RT_TIMEOUT_S");
  }
  set_operation_timeout_ms(timeout_ms);
  const std::chrono::milliseconds timeout(operation_timeout_ms());

  auto r = std::make_unique<Runtime>();
  int check = options.check;
  if (check < 0) {
    check = env_switch("CHORUS_RT_CHECK", false) ? 1 : 0;
  }
  r->check = check == 1;
  r->agree = options.agree < 0 ? env_switch("CHORUS_RT_AGREE", true) : options.agree != 0;
  std::string table = options.tuning_table;
  if (table.empty())
    if (const char* env = std::getenv("CHORUS_RT_TUNING")) table = env;
  if (!table.empty()) r->tuning = TuningTable::load(table);

  const bool want_mpi = std::find(ordered.begin(), ordered.end(), "mpi") != ordered.end();
  if (want_mpi && std::getenv("CHORUS_RANK") != nullptr && !launched_by_mpirun()) {
    const char* ws = std::getenv("CHORUS_WORLD_SIZE");
    if (ws != nullptr && std::string(ws) != "1")
      throw InputError("init", "backend 'mpi' needs ranks started by mpirun (mpirun -n N prog); "
                               "under chorus launch use shm or gloo");
  }
  r->world = bootstrap_world(want_mpi, timeout, options.world.get());
  std::string log = options.log;
  if (log.empty())
    if (const char* env = std::getenv("CHORUS_RT_LOG")) log = env;
  if (!log.empty())
    r->log = std::make_shared<CommLog>(log, r->world.rank, r->world.size, options.log.empty() ? "environment CHORUS_RT_LOG" : "init: InitOptions::log");
  if (expanded && !r->world.single_host) std::erase(ordered, std::string("shm"));
  r->generation = g_generation++;
  for (const auto& name : ordered)
    r->slots[name] = make_slot(name, name, world_context(*r, fmt::format("{}/{}/{}", r->world.run_id, r->generation, name)), r->check, r->agree);
  r->order = ordered;
  for (const auto& name : ordered) r->fast.add(name, r->slots[name].get());
  g_rt = r.release();
}

bool is_initialized() { return g_rt != nullptr; }

void finalize() {
  if (g_rt == nullptr) return;
  std::unique_ptr<Runtime> r(g_rt);
  g_rt = nullptr;
  bool any_broken = false, all_broken_by_disagreement = true;
  std::string first_failure;
  // Every operation ends by its own deadline (docs/runtime.md, "Failures"); allow that plus
  // Work::wait()'s grace before declaring a lane stuck.
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(operation_timeout_ms() + Work::kLastResortGraceMs);
  for (auto& [name, s] : r->slots) {
    // On a healthy backend, operations still queued or running (asynchronous ones the program
    // did not wait for, synchronous ones inline on other threads) run to their end first; a
    // lane still busy at the deadline is stuck. A broken backend is not waited for. Then the
    // lanes' threads are joined, or detached if broken or stuck.
    bool idle = !s->is_broken.load();
    for (int l = 0; idle && l < s->lane_count; ++l) idle = s->lanes[l].queue->wait_until_idle(deadline);
    idle = idle && !s->is_broken.load();  // one of those operations may have failed
    for (int l = 0; l < s->lane_count; ++l) s->lanes[l].queue->stop(!idle);
    if (!idle) {
      any_broken = true;
      {
        std::lock_guard lock(s->broken_mutex);
        all_broken_by_disagreement = all_broken_by_disagreement && s->is_broken.load() && s->broken_by_disagreement;
        if (first_failure.empty()) first_failure = s->broken;
      }
      // An operation may still be inside the backend (a detached progress thread, an inline
      // call past its deadline), and a broken backend must not be called again (for mpi: no
      // MPI_Comm_free, no MPI_Finalize, which would progress abandoned requests): leave the
      // slot (backend, queues, threads) alive rather than destroy it under that operation.
      (void)s.release();
    }
  }
  // A rank's last operation may end before its peers' (a ring's last step is received by the
  // peer after the sender is done): closing connections now could cut a peer's operation short
  // (gloo then sees "connection closed by peer"). So healthy ranks first agree that every rank
  // is done, as MPI_Finalize does; a broken runtime does not wait for peers that may be gone,
  // unless what broke it was a disagreement, which every rank learned of alive (and one may
  // still be receiving the last of the exchange that told it).
  if (!any_broken || all_broken_by_disagreement) quiesce(*r, deadline);
  else leave_without_waiting(r->world, r->generation, first_failure);
  // Destroy healthy groups and backends in reverse order of creation, then the world.
  r->fast.count.store(0);
  for (auto it = r->groups.rbegin(); it != r->groups.rend(); ++it) r->slots[*it].reset();
  for (auto it = r->order.rbegin(); it != r->order.rend(); ++it) r->slots[*it].reset();
  r->world.store.reset();
  r->world.server.reset();
  if (any_broken) mpi_mark_unusable();
}

void synchronize(const std::vector<std::string>& names) {
  Runtime& r = rt("synchronize");
  for (const auto& n : names.empty() ? r.order : names) {
    auto it = r.slots.find(n);
    if (it == r.slots.end())
      throw InputError("synchronize", fmt::format("backend '{}' is not initialised (initialised: {})",
                                                  n, fmt::join(r.order, ", ")));
    for (int l = 0; l < it->second->lane_count; ++l) it->second->lanes[l].queue->drain();
  }
}

std::vector<std::string> backends() { return g_rt != nullptr ? g_rt->order : std::vector<std::string>{}; }

// A name with an all_reduce algorithm ("mpi:ring") gives its backend's size and rank.
int size(std::string_view backend) {
  std::size_t algorithm = 0;
  return slot_for(backend, OpKind::barrier, 0, &algorithm).backend->size();
}
int rank(std::string_view backend) {
  std::size_t algorithm = 0;
  return slot_for(backend, OpKind::barrier, 0, &algorithm).backend->rank();
}

const TuningTable* tuning_table() { return g_rt != nullptr && g_rt->tuning ? &*g_rt->tuning : nullptr; }

std::string resolve_backend(std::string_view backend, OpKind op, std::size_t bytes) {
  std::size_t algorithm = 0;
  Slot& s = slot_for(backend, op, bytes, takes_algorithm(op) ? &algorithm : nullptr);
  return algorithm == 0 ? s.backend->name() : s.backend->name() + ":" + s.algorithms_of(op)[algorithm - 1];
}

std::vector<std::string> algorithm_names(std::string_view backend, OpKind op) {
  if (!takes_algorithm(op)) return {};
  return slot_for(backend, op, 0).algorithms_of(op);
}

bool is_native(std::string_view backend, OpKind op) {
  return slot_for(backend, op, 0).backend->native(op);
}

// ---- groups ----------------------------------------------------------------------------------

namespace {

void check_group_name(const Runtime& r, const std::string& name, const std::string& where) {
  if (name.empty() || name == "auto" || name == "all" ||
      std::find(kAvailable.begin(), kAvailable.end(), name) != kAvailable.end())
    throw InputError(where, fmt::format("'{}' cannot name a group (backend names, auto and all are taken)", name));
  if (r.slots.count(name) != 0 || std::find(r.not_member.begin(), r.not_member.end(), name) != r.not_member.end())
    throw InputError(where, fmt::format("a group or backend named '{}' exists already", name));
}

void add_group(Runtime& r, const std::string& name, const std::string& kind, std::vector<int> world_ranks,
               const std::string& key_prefix, int color, int key);

}  // namespace

void split(const std::string& name, std::string_view backend, int color, int key) {
  Runtime& r = rt("split");
  const std::string where = fmt::format("split '{}' on rank {}", name, r.world.rank);
  check_group_name(r, name, where);
  if (color < -1) throw InputError(where, fmt::format("color {} must be >= 0, or -1 to join no group", color));
  std::string kind(backend);
  if (kind == "auto") kind = r.order.front();
  if (std::find(kAvailable.begin(), kAvailable.end(), kind) == kAvailable.end())
    throw InputError(where, fmt::format("unknown backend '{}' (available: {}, auto)", kind, fmt::join(kAvailable, ", ")));
  if (kind == "mpi" && !mpi_is_initialized())
    throw InputError(where, "backend 'mpi' needs ranks started by mpirun (mpirun -n N prog)");
  // Every rank publishes (color, key, backend); every rank reads all of them, so all agree on
  // the members of every group and on the backend.
  const auto timeout = std::chrono::milliseconds(operation_timeout_ms());
  const std::string base = fmt::format("{}/{}/group/{}", r.world.run_id, g_generation - 1, name);
  r.world.store->set_string(fmt::format("{}/rank/{}", base, r.world.rank), fmt::format("{} {} {}", color, key, kind));
  std::vector<std::pair<int, int>> mine;  // (key, world rank) of my color
  for (int j = 0; j < r.world.size; ++j) {
    const std::string v = r.world.store->get_string(fmt::format("{}/rank/{}", base, j), timeout);
    int c = 0, k = 0;
    char b[16] = {};
    if (std::sscanf(v.c_str(), "%d %d %15s", &c, &k, b) != 3)
      throw CommError(fmt::format("{}: malformed entry of rank {}: '{}'", where, j, v));
    if (kind != b)
      throw InputError(where, fmt::format("rank {} asked for backend '{}', this rank for '{}': every rank must "
                                          "give the same backend", j, b, kind));
    if (color >= 0 && c == color) mine.emplace_back(k, j);
  }
  if (color < 0) {
    if (kind == "mpi") mpi_split_world_as_non_member();
    r.not_member.push_back(name);
    return;
  }
  std::sort(mine.begin(), mine.end());
  std::vector<int> world_ranks;
  for (const auto& m : mine) world_ranks.push_back(m.second);
  add_group(r, name, kind, std::move(world_ranks), fmt::format("{}/c{}", base, color), color, key);
}

void member_group(const std::string& name, const std::vector<int>& world_ranks, std::string_view backend) {
  Runtime& r = rt("member_group");
  const std::string where = fmt::format("member_group '{}' on rank {}", name, r.world.rank);
  check_group_name(r, name, where);
  std::string kind(backend);
  if (kind == "auto") kind = r.world.single_host ? "shm" : "gloo";
  if (kind != "shm" && kind != "gloo")
    throw InputError(where, fmt::format("backend '{}': a group made by its members alone runs on shm or gloo (mpi "
                                        "needs every world rank in the call: use new_group)", kind));
  if (kind == "shm" && !r.world.single_host)
    throw InputError(where, "backend 'shm' needs every rank on one host");
  int me = -1;
  for (std::size_t i = 0; i < world_ranks.size(); ++i) {
    if (world_ranks[i] < 0 || world_ranks[i] >= r.world.size)
      throw InputError(where, fmt::format("ranks[{}] = {} is not a rank of the world (size {})", i, world_ranks[i], r.world.size));
    if (std::count(world_ranks.begin(), world_ranks.end(), world_ranks[i]) > 1)
      throw InputError(where, fmt::format("rank {} is listed twice", world_ranks[i]));
    if (world_ranks[i] == r.world.rank) me = static_cast<int>(i);
  }
  if (me < 0) throw InputError(where, "this rank is not in the list: only the members call member_group");
  add_group(r, name, kind, world_ranks, fmt::format("{}/{}/member_group/{}", r.world.run_id, g_generation - 1, name), 0, me);
}

namespace {

void add_group(Runtime& r, const std::string& name, const std::string& kind, std::vector<int> world_ranks,
               const std::string& key_prefix, int color, int key) {
  BackendContext ctx = world_context(r, key_prefix);
  ctx.rank = static_cast<int>(std::find(world_ranks.begin(), world_ranks.end(), r.world.rank) - world_ranks.begin());
  ctx.size = static_cast<int>(world_ranks.size());
  ctx.mpi_color = color;
  ctx.mpi_key = key;
  ctx.failure_of = failure_lookup(r, world_ranks);
  auto slot = make_slot(kind, name, ctx, r.check, r.agree);
  std::lock_guard lock(r.slots_mutex);
  r.slots[name] = std::move(slot);
  std::string map;
  for (std::size_t i = 0; i < world_ranks.size() && i < 16; ++i)
    map += fmt::format("{}group rank {} = world rank {}", i == 0 ? "" : ", ", i, world_ranks[i]);
  if (world_ranks.size() > 16) map += ", ...";
  r.slots[name]->group_note = fmt::format("[in group '{}' on {}: {}]", name, kind, map);
  r.groups.push_back(name);
  r.members[name] = std::move(world_ranks);
  r.fast.add(name, r.slots[name].get());
}

}  // namespace

void new_group(const std::string& name, const std::vector<int>& ranks, std::string_view backend) {
  Runtime& r = rt("new_group");
  int key = -1;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0 || ranks[i] >= r.world.size)
      throw InputError(fmt::format("new_group '{}' on rank {}", name, r.world.rank),
                       fmt::format("ranks[{}] = {} is not a rank of the world (size {})", i, ranks[i], r.world.size));
    if (std::count(ranks.begin(), ranks.end(), ranks[i]) > 1)
      throw InputError(fmt::format("new_group '{}' on rank {}", name, r.world.rank),
                       fmt::format("rank {} is listed twice", ranks[i]));
    if (ranks[i] == r.world.rank) key = static_cast<int>(i);
  }
  split(name, backend, key >= 0 ? 0 : -1, key);
}

std::vector<int> group_ranks(std::string_view name) {
  Runtime& r = rt("group_ranks");
  auto it = r.members.find(name);
  if (it != r.members.end()) return it->second;
  Slot& s = slot_for(name, OpKind::barrier, 0);  // a backend: the whole world (or an error)
  std::vector<int> all(static_cast<std::size_t>(s.world_size));
  for (int i = 0; i < s.world_size; ++i) all[static_cast<std::size_t>(i)] = i;
  return all;
}

// ---- operations ------------------------------------------------------------------------------

Work send(std::string_view backend, const void* buf, std::size_t count, DType dtype, int dst,
          bool async_op) {
  Slot& s = slot_for(backend, OpKind::send, count * dtype_bytes(dtype));
  Backend& b = *s.backend;
  require_buffer(b, OpKind::send, buf, count, "buffer");
  require(dst >= 0 && dst < b.size() && dst != b.rank(), b, OpKind::send, [&] { return fmt::format("destination {} must be another rank of this world (size {})", dst, b.size()); });
  const std::size_t bytes = count * dtype_bytes(dtype);
  return submit(s, OpKind::send, count, dtype, async_op, std::nullopt,
                [=](Backend& x) { x.user_send(buf, bytes, dst); });
}

Work recv(std::string_view backend, void* buf, std::size_t count, DType dtype, int src,
          bool async_op) {
  Slot& s = slot_for(backend, OpKind::recv, count * dtype_bytes(dtype));
  Backend& b = *s.backend;
  require_buffer(b, OpKind::recv, buf, count, "buffer");
  require(src >= 0 && src < b.size() && src != b.rank(), b, OpKind::recv, [&] { return fmt::format("source {} must be another rank of this world (size {})", src, b.size()); });
  const std::size_t bytes = count * dtype_bytes(dtype);
  return submit(s, OpKind::recv, count, dtype, async_op, std::nullopt,
                [=](Backend& x) { x.user_recv(buf, bytes, src); });
}

Work barrier(std::string_view backend, bool async_op) {
  Slot& s = slot_for(backend, OpKind::barrier, 0);
  return submit(s, OpKind::barrier, 0, DType::u8, async_op, uniform_sig(s, OpKind::barrier, 0, DType::u8, ReduceOp::sum, -1, nullptr, nullptr),
                [](Backend& x) {
                  if (x.size() > 1) x.barrier();
                });
}

Work broadcast(std::string_view backend, void* buf, std::size_t count, DType dtype, int root,
               bool async_op) {
  std::size_t algorithm = 0;
  Slot& s = slot_for(backend, OpKind::broadcast, count * dtype_bytes(dtype), &algorithm);
  require_root(*s.backend, OpKind::broadcast, root);
  require_buffer(*s.backend, OpKind::broadcast, buf, count, "buffer");
  return submit_as(s.label_of(OpKind::broadcast, algorithm), s, OpKind::broadcast, count, dtype, async_op,
                   uniform_sig(s, OpKind::broadcast, count, dtype, ReduceOp::sum, root, nullptr, buf, algorithm), [=](Backend& x) {
                     if (count == 0 || x.size() == 1) return;
                     if (algorithm == 0)
                       x.broadcast(buf, count, dtype, root);
                     else
                       x.run_algorithm(algorithm - 1, {OpKind::broadcast, buf, buf, count, dtype, ReduceOp::sum, root});
                   });
}

Work reduce(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
            ReduceOp op, int root, bool async_op) {
  Slot& s = slot_for(backend, OpKind::reduce, count * dtype_bytes(dtype));
  Backend& b = *s.backend;
  require_root(b, OpKind::reduce, root);
  require_buffer(b, OpKind::reduce, in, count, "input");
  if (b.rank() == root) require_buffer(b, OpKind::reduce, out, count, "output at root");
  const ReduceOp wire = wire_op(s, op);
  return submit(s, OpKind::reduce, count, dtype, async_op,
                uniform_sig(s, OpKind::reduce, count, dtype, op, root, in, out), [=](Backend& x) {
                  if (count == 0) return;
                  if (x.size() == 1) {
                    if (in != out) std::memcpy(out, in, count * dtype_bytes(dtype));
                  } else {
                    x.reduce(in, out, count, dtype, wire, root);
                  }
                  if (op == ReduceOp::avg && x.rank() == root) divide_by(dtype, out, count, x.size());
                });
}

Work all_reduce(std::string_view backend, const void* in, void* out, std::size_t count,
                DType dtype, ReduceOp op, bool async_op) {
  std::size_t algorithm = 0;
  Slot& s = slot_for(backend, OpKind::all_reduce, count * dtype_bytes(dtype), &algorithm);
  require_buffer(*s.backend, OpKind::all_reduce, in, count, "input");
  require_buffer(*s.backend, OpKind::all_reduce, out, count, "output");
  const int n = s.world_size;
  const ReduceOp wire = wire_op(s, op);
  return submit_as(s.label_of(OpKind::all_reduce, algorithm), s, OpKind::all_reduce, count, dtype,
                   async_op, uniform_sig(s, OpKind::all_reduce, count, dtype, op, -1, in, out, algorithm), [=](Backend& x) {
                  if (count == 0) return;
                  if (n == 1) {
                    if (in != out) std::memcpy(out, in, count * dtype_bytes(dtype));
                  } else if (algorithm == 0) {
                    x.all_reduce(in, out, count, dtype, wire);
                  } else {
                    x.run_algorithm(algorithm - 1, {OpKind::all_reduce, in, out, count, dtype, wire, 0});
                  }
                  if (op == ReduceOp::avg) divide_by(dtype, out, count, n);
                });
}

Work reduce_scatter(std::string_view backend, const void* in, void* out, std::size_t count,
                    DType dtype, ReduceOp op, bool async_op) {
  std::size_t algorithm = 0;
  Slot& s = slot_for(backend, OpKind::reduce_scatter, count * dtype_bytes(dtype), &algorithm);
  require_buffer(*s.backend, OpKind::reduce_scatter, in, count, "input");
  require_buffer(*s.backend, OpKind::reduce_scatter, out, count, "output");
  const ReduceOp wire = wire_op(s, op);
  return submit_as(s.label_of(OpKind::reduce_scatter, algorithm), s, OpKind::reduce_scatter, count, dtype, async_op,
                uniform_sig(s, OpKind::reduce_scatter, count, dtype, op, -1, in, out, algorithm), [=](Backend& x) {
                  if (count == 0) return;
                  if (x.size() == 1) {
                    if (in != out) std::memcpy(out, in, count * dtype_bytes(dtype));
                  } else if (algorithm == 0) {
                    x.reduce_scatter(in, out, count, dtype, wire);
                  } else {
                    x.run_algorithm(algorithm - 1, {OpKind::reduce_scatter, in, out, count, dtype, wire, 0});
                  }
                  if (op == ReduceOp::avg) divide_by(dtype, out, count, x.size());
                });
}

Work all_gather(std::string_view backend, const void* in, void* out, std::size_t count,
                DType dtype, bool async_op) {
  std::size_t algorithm = 0;
  Slot& s = slot_for(backend, OpKind::all_gather, count * dtype_bytes(dtype), &algorithm);
  require_buffer(*s.backend, OpKind::all_gather, in, count, "input");
  require_buffer(*s.backend, OpKind::all_gather, out, count, "output");
  return submit_as(s.label_of(OpKind::all_gather, algorithm), s, OpKind::all_gather, count, dtype, async_op,
                uniform_sig(s, OpKind::all_gather, count, dtype, ReduceOp::sum, -1, in, out, algorithm), [=](Backend& x) {
                  if (count == 0) return;
                  if (x.size() == 1)
                    std::memmove(out, in, count * dtype_bytes(dtype));
                  else if (algorithm == 0)
                    x.all_gather(in, out, count, dtype);
                  else
                    x.run_algorithm(algorithm - 1, {OpKind::all_gather, in, out, count, dtype, ReduceOp::sum, 0});
                });
}

Work gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
            int root, bool async_op) {
  Slot& s = slot_for(backend, OpKind::gather, count * dtype_bytes(dtype));
  require_root(*s.backend, OpKind::gather, root);
  require_buffer(*s.backend, OpKind::gather, in, count, "input");
  if (s.backend->rank() == root) require_buffer(*s.backend, OpKind::gather, out, count, "output at root");
  return submit(s, OpKind::gather, count, dtype, async_op,
                uniform_sig(s, OpKind::gather, count, dtype, ReduceOp::sum, root, in, out), [=](Backend& x) {
                  if (count == 0) return;
                  if (x.size() == 1)
                    std::memmove(out, in, count * dtype_bytes(dtype));
                  else
                    x.gather(in, out, count, dtype, root);
                });
}

Work scatter(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
             int root, bool async_op) {
  Slot& s = slot_for(backend, OpKind::scatter, count * dtype_bytes(dtype));
  require_root(*s.backend, OpKind::scatter, root);
  if (s.backend->rank() == root) require_buffer(*s.backend, OpKind::scatter, in, count, "input at root");
  require_buffer(*s.backend, OpKind::scatter, out, count, "output");
  return submit(s, OpKind::scatter, count, dtype, async_op,
                uniform_sig(s, OpKind::scatter, count, dtype, ReduceOp::sum, root, in, out), [=](Backend& x) {
                  if (count == 0) return;
                  if (x.size() == 1)
                    std::memmove(out, in, count * dtype_bytes(dtype));
                  else
                    x.scatter(in, out, count, dtype, root);
                });
}

Work all_to_all_single(std::string_view backend, const void* in, void* out, std::size_t count,
                       DType dtype, bool async_op) {
  std::size_t algorithm = 0;
  Slot& s = slot_for(backend, OpKind::all_to_all_single, count * dtype_bytes(dtype), &algorithm);
  require_buffer(*s.backend, OpKind::all_to_all_single, in, count, "input");
  require_buffer(*s.backend, OpKind::all_to_all_single, out, count, "output");
  require(in != out || count == 0, *s.backend, OpKind::all_to_all_single, [&] { return std::string("input and output must not be the same buffer"); });
  return submit_as(s.label_of(OpKind::all_to_all_single, algorithm), s, OpKind::all_to_all_single, count, dtype, async_op,
                uniform_sig(s, OpKind::all_to_all_single, count, dtype, ReduceOp::sum, -1, in, out, algorithm), [=](Backend& x) {
                  if (count == 0) return;
                  if (x.size() == 1)
                    std::memcpy(out, in, count * dtype_bytes(dtype));
                  else if (algorithm == 0)
                    x.all_to_all_single(in, out, count, dtype);
                  else
                    x.run_algorithm(algorithm - 1, {OpKind::all_to_all_single, in, out, count, dtype, ReduceOp::sum, 0});
                });
}

Work all_to_all(std::string_view backend, const std::vector<const void*>& ins,
                const Counts& in_counts, const std::vector<void*>& outs, const Counts& out_counts,
                DType dtype, bool async_op) {
  Slot& s = slot_for(backend, OpKind::all_to_all, 0);
  Backend& b = *s.backend;
  require(ins.size() == static_cast<std::size_t>(b.size()) && outs.size() == ins.size(), b,
          OpKind::all_to_all, [&] { return std::string(fmt::format("need {} input and output buffers, got {} and {}", b.size(),
                                          ins.size(), outs.size())); });
  require_counts(b, OpKind::all_to_all, in_counts, "input counts");
  require_counts(b, OpKind::all_to_all, out_counts, "output counts");
  for (int j = 0; j < b.size(); ++j) {
    require_buffer(b, OpKind::all_to_all, ins[j], in_counts[j], "an input buffer");
    require_buffer(b, OpKind::all_to_all, outs[j], out_counts[j], "an output buffer");
  }
  CallSignature sig;
  sig.op = OpKind::all_to_all;
  sig.dtype = dtype;
  sig.vector_form = true;
  sig.sends.assign(in_counts.begin(), in_counts.end());
  sig.expects.assign(out_counts.begin(), out_counts.end());
  return submit(s, OpKind::all_to_all, in_counts[b.rank()], dtype, async_op, sig,
                [=](Backend& x) { x.all_to_all(ins, in_counts, outs, out_counts, dtype); });
}

Work all_gatherv(std::string_view backend, const void* in, std::size_t count, void* out,
                 const Counts& counts, const Counts& displs, DType dtype, bool async_op) {
  Slot& s = slot_for(backend, OpKind::all_gatherv, 0);
  Backend& b = *s.backend;
  require_counts(b, OpKind::all_gatherv, counts, "counts");
  require_counts(b, OpKind::all_gatherv, displs, "displacements");
  require(counts[b.rank()] == count, b, OpKind::all_gatherv, [&] { return fmt::format("counts[{}] = {} but this rank sends {}", b.rank(), counts[b.rank()], count); });
  require_buffer(b, OpKind::all_gatherv, in, count, "input");
  CallSignature sig;
  sig.op = OpKind::all_gatherv;
  sig.dtype = dtype;
  sig.vector_form = true;
  sig.sends.assign(b.size(), count);
  sig.expects.assign(counts.begin(), counts.end());
  return submit(s, OpKind::all_gatherv, count, dtype, async_op, sig,
                [=](Backend& x) { x.all_gatherv(in, count, out, counts, displs, dtype); });
}

Work gatherv(std::string_view backend, const void* in, std::size_t count, void* out,
             const Counts& counts, const Counts& displs, DType dtype, int root, bool async_op) {
  Slot& s = slot_for(backend, OpKind::gatherv, 0);
  Backend& b = *s.backend;
  require_root(b, OpKind::gatherv, root);
  require_buffer(b, OpKind::gatherv, in, count, "input");
  CallSignature sig;
  sig.op = OpKind::gatherv;
  sig.dtype = dtype;
  sig.root = root;
  sig.vector_form = true;
  sig.sends.assign(b.size(), 0);
  sig.sends[root] = count;
  sig.expects.assign(b.size(), 0);
  if (b.rank() == root) {
    require_counts(b, OpKind::gatherv, counts, "counts");
    require_counts(b, OpKind::gatherv, displs, "displacements");
    sig.expects.assign(counts.begin(), counts.end());
  }
  return submit(s, OpKind::gatherv, count, dtype, async_op, sig,
                [=](Backend& x) { x.gatherv(in, count, out, counts, displs, dtype, root); });
}

Work scatterv(std::string_view backend, const void* in, const Counts& counts,
              const Counts& displs, void* out, std::size_t count, DType dtype, int root,
              bool async_op) {
  Slot& s = slot_for(backend, OpKind::scatterv, 0);
  Backend& b = *s.backend;
  require_root(b, OpKind::scatterv, root);
  require_buffer(b, OpKind::scatterv, out, count, "output");
  CallSignature sig;
  sig.op = OpKind::scatterv;
  sig.dtype = dtype;
  sig.root = root;
  sig.vector_form = true;
  sig.sends.assign(b.size(), 0);
  sig.expects.assign(b.size(), 0);
  sig.expects[root] = count;
  if (b.rank() == root) {
    require_counts(b, OpKind::scatterv, counts, "counts");
    require_counts(b, OpKind::scatterv, displs, "displacements");
    sig.sends.assign(counts.begin(), counts.end());
  }
  return submit(s, OpKind::scatterv, count, dtype, async_op, sig,
                [=](Backend& x) { x.scatterv(in, counts, displs, out, count, dtype, root); });
}

Work all_to_allv(std::string_view backend, const void* in, const Counts& send_counts,
                 const Counts& send_displs, void* out, const Counts& recv_counts,
                 const Counts& recv_displs, DType dtype, bool async_op) {
  Slot& s = slot_for(backend, OpKind::all_to_allv, 0);
  Backend& b = *s.backend;
  require_counts(b, OpKind::all_to_allv, send_counts, "send counts");
  require_counts(b, OpKind::all_to_allv, send_displs, "send displacements");
  require_counts(b, OpKind::all_to_allv, recv_counts, "receive counts");
  require_counts(b, OpKind::all_to_allv, recv_displs, "receive displacements");
  CallSignature sig;
  sig.op = OpKind::all_to_allv;
  sig.dtype = dtype;
  sig.vector_form = true;
  sig.sends.assign(send_counts.begin(), send_counts.end());
  sig.expects.assign(recv_counts.begin(), recv_counts.end());
  return submit(s, OpKind::all_to_allv, send_counts[b.rank()], dtype, async_op, sig,
                [=](Backend& x) {
                  x.all_to_allv(in, send_counts, send_displs, out, recv_counts, recv_displs, dtype);
                });
}

}  // namespace chorus::rt
