// A runtime's life: construction (what init() does: the world, the settings, a communicator per
// backend) and destruction (what finalize() does: wait for the operations, agree with the peers
// that all are done, tear down; a broken backend is left alive, never destroyed under a running
// operation).
#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <thread>
#include <utility>

#include "core/error.h"
#include "rt/backends/backends.h"
#include "rt/clock_offset.h"
#include "rt/diagnostics/dump_signal.h"
#include "rt/errors.h"
#include "rt/fusion/fusion.h"
#include "rt/rendezvous/mpi_env.h"
#include "rt/runtime_config.h"
#include "rt/runtime_instance.h"

namespace chorus::rt {

namespace {

// Where finalize() of a broken runtime publishes the rank's first failure, for its peers.
std::string failure_key(const std::string& run_id, int generation, int world_rank) {
  return fmt::format("{}/{}/failed/{}", run_id, generation, world_rank);
}

std::string finalize_key(const World& world, int generation) {
  return fmt::format("{}/{}/finalize", world.run_id, generation);
}

}  // namespace

Runtime::Runtime(const std::vector<std::string>& names, const InitOptions& options) {
  const auto& known = known_backends();
  if (names.empty()) throw InputError("init", fmt::format("no backends given (available: {})", fmt::join(known, ", ")));
  // "auto" / "all": every backend that can work under the current launcher (mpi needs mpirun
  // when there is more than one rank; shm needs one host, checked after the bootstrap).
  const bool without_mpirun = several_ranks_without_mpirun(options.world.get());
  std::vector<std::string> wanted;
  bool expanded = false;
  for (const auto& n : names) {
    if (n == "auto" || n == "all") {
      expanded = true;
      for (const auto& a : known)
        if (!(a == "mpi" && without_mpirun)) wanted.push_back(a);
      continue;
    }
    if (std::find(known.begin(), known.end(), n) == known.end())
      throw InputError("init", fmt::format("unknown backend '{}' (available: {})", n, fmt::join(known, ", ")));
    wanted.push_back(n);
  }
  // Preference order for "auto" and de-duplication.
  for (const auto& a : known)
    if (std::find(wanted.begin(), wanted.end(), a) != wanted.end()) order_.push_back(a);

  const Settings settings = resolve_settings(options);
  timeout_ms_ = settings.timeout_ms;
  check_ = settings.check;
  agree_ = settings.agree;
  if (!settings.tuning_table.empty()) tuning_ = TuningTable::load(settings.tuning_table);

  const bool want_mpi = std::find(order_.begin(), order_.end(), "mpi") != order_.end();
  if (want_mpi && without_mpirun && options.world == nullptr)
    throw InputError("init",
                     "backend 'mpi' needs ranks started by mpirun (mpirun -n N prog); "
                     "under chorus launch use shm or gloo");
  world_ = bootstrap_world(want_mpi, std::chrono::milliseconds(settings.timeout_ms), options.world.get());
  if (expanded && !world_.single_host) std::erase(order_, std::string("shm"));
  // The runtimes this rank has made on this run before this one, counted in the run's store (the
  // same on every rank, ranks as processes or as threads): keeps the keys of a second runtime on
  // a run apart from the first one's.
  generation_ =
      static_cast<int>(world_.store->add(fmt::format("chorus/runtimes/{}/{}", world_.run_id, world_.rank), 1) - 1);
  ClockOffset clock{0, -1};
  if (!settings.log.empty()) {
    // Its times comparable with rank 0's (clock_offset.h): every rank with a log takes part.
    clock =
        estimate_clock_offset(*world_.store, fmt::format("chorus/clock/{}/{}", world_.run_id, generation_), world_.rank,
                              world_.size, std::min(std::chrono::milliseconds(settings.timeout_ms), kClockWait));
    log_ = std::make_shared<CommLog>(settings.log, world_.rank, world_.size, settings.log_setting, clock);
  }
  recorder_ = std::make_shared<FlightRecorder>(FlightRecorder::Identity{world_.run_id, world_.rank, world_.size},
                                               settings.record_entries, settings.beacon_dir, settings.dump_dir);
  recorder_->set_clock_offset(clock.to_rank0_ns, clock.error_ns);  // (the flight dumps' too, when known)
  for (const auto& name : order_)
    communicators_[name] =
        make_communicator(name, name, world_context(fmt::format("{}/{}/{}", world_.run_id, generation_, name)));
  for (const auto& name : order_) fast_.add(name, communicators_[name].get());
  recorder_->set_source([this] { return flight_views(); });
  register_for_dump_signal(recorder_.get());
  recorder_->place(RankPlace::kRunning);
}

// A backend instance of kind `kind` (mpi, gloo, shm) with its progress lanes.
std::unique_ptr<CommunicatorState> Runtime::make_communicator(const std::string& kind, const std::string& label,
                                                              const BackendContext& ctx) const {
  auto c = std::make_unique<CommunicatorState>();
  c->label = label;
  c->recorder = recorder_;
  c->compressed_label = label + ":zfp";
  if (kind == "mpi")
    c->backend = make_mpi_backend(ctx);
  else if (kind == "gloo")
    c->backend = make_gloo_backend(ctx);
  else
    c->backend = make_shm_backend(ctx);
  c->world_size = c->backend->size();
  c->rank = c->backend->rank();
  c->shape = agreement_shape(*c->backend);
  c->takes_avg = c->backend->takes_avg();
  using Agreement = CommunicatorState::Agreement;
  if (c->world_size > 1)
    c->agreement = check_                                         ? Agreement::kFull
                   : c->backend->agrees_on_data_path() || !agree_ ? Agreement::kNone
                                                                  : Agreement::kDigest;
  c->agree_named = c->agreement == Agreement::kNone && c->world_size > 1 && agree_ && !check_;
  for (CollectiveKind op : kAllCollectiveKinds) {
    if (!takes_algorithm(op)) continue;
    const auto i = static_cast<std::size_t>(op);
    c->algorithms[i] = c->backend->algorithms(op);
    for (const auto& a : c->algorithms[i]) c->algorithm_labels[i].push_back(label + ":" + a);
  }
  c->lane_count = c->backend->concurrent_point_to_point() ? 3 : 1;
  static const char* kLaneNames[3] = {"", "-send", "-recv"};
  for (int l = 0; l < c->lane_count; ++l) {
    c->lanes[l].activity = std::make_shared<BackendActivity>();
    c->lanes[l].activity->backend = label;
    c->lanes[l].activity->timeout_ms = timeout_ms_;
    c->lanes[l].queue = std::make_unique<ProgressQueue>(label + kLaneNames[l]);
    c->lanes[l].ring = recorder_->make_ring();
  }
  return c;
}

// The context of a backend over the world, or over a group whose rank j is world rank
// world_ranks[j]. BackendContext::failure_of holds the store weakly: a broken backend outlives
// the runtime.
BackendContext Runtime::world_context(const std::string& key_prefix, std::vector<int> world_ranks) const {
  BackendContext ctx;
  ctx.rank = world_.rank;
  ctx.size = world_.size;
  ctx.store = world_.store.get();
  ctx.store_weak = world_.store;
  ctx.key_prefix = key_prefix;
  ctx.single_host = world_.single_host;
  ctx.gloo_host = world_.gloo_host;
  ctx.timeout = std::chrono::milliseconds(timeout_ms_);
  ctx.aborted = aborted_;
  ctx.before_abort = [recorder = std::weak_ptr<FlightRecorder>(recorder_)](const std::string& why) {
    if (const auto r = recorder.lock()) r->dump_failure("timeout", why);
  };
  ctx.failure_of = [store = std::weak_ptr<Store>(world_.store), run_id = world_.run_id, generation = generation_,
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
  return ctx;
}

void Runtime::synchronize(const std::vector<std::string>& names) {
  for (const auto& n : names.empty() ? order_ : names) {
    auto it = communicators_.find(n);
    if (it == communicators_.end())
      throw InputError("synchronize",
                       fmt::format("backend '{}' is not initialised (initialised: {})", n, fmt::join(order_, ", ")));
    for (int l = 0; l < it->second->lane_count; ++l) it->second->lanes[l].queue->drain();
  }
}

void Runtime::abort(std::string_view why) {
  const std::string what = fmt::format("aborted on rank {}{}{}", world_.rank, why.empty() ? "" : ": ", why);
  if (aborting_.exchange(true)) return;
  aborted_->why = what;
  aborted_->set.store(true, std::memory_order_release);
  // Why this rank is ending, for a peer whose operation fails when this rank's connections
  // close, or that finds it gone (BackendContext::failure_of): published before the backends
  // end what is in flight.
  try {
    if (world_.store && world_.size > 1)
      world_.store->set_string(failure_key(world_.run_id, generation_, world_.rank), what);
  } catch (const std::exception&) {
    // the store is gone with the failure that made the program abort: nothing more to tell
  }
  {
    std::lock_guard lock(mutex_);
    for (auto& [name, c] : communicators_) {
      if (!c) continue;
      c->break_with(what, false);   // later calls are refused
      c->backend->interrupt(what);  // and those in flight end
    }
  }
  recorder_->dump_failure("abort", what);
}

Runtime::~Runtime() { finalize(); }

void Runtime::finalize() {
  recorder_->place(RankPlace::kInFinalize);
  // The fusions first (collective, as finalize is): each flushes what is queued onto the
  // communicators, which are still all there.
  while (!fusions_.empty()) fusions_.pop_back();
  bool any_broken = false, all_broken_by_disagreement = true;
  std::string first_failure;
  // Every operation ends by its own deadline (docs/failures.md); allow that plus
  // Work::wait()'s grace before declaring a lane stuck.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms_ + Work::kLastResortGraceMs);
  for (auto& [name, c] : communicators_) {
    // On a healthy backend, operations still queued or running (asynchronous ones the program
    // did not wait for, synchronous ones inline on other threads) run to their end first; a
    // lane still busy at the deadline is stuck. A broken backend is not waited for. Then the
    // lanes' threads are joined, or detached if broken or stuck.
    bool idle = !c->is_broken.load();
    for (int l = 0; idle && l < c->lane_count; ++l) idle = c->lanes[l].queue->wait_until_idle(deadline);
    idle = idle && !c->is_broken.load();  // one of those operations may have failed
    for (int l = 0; l < c->lane_count; ++l) c->lanes[l].queue->stop(!idle);
    if (!idle) {
      any_broken = true;
      {
        std::lock_guard lock(c->broken_mutex);
        all_broken_by_disagreement = all_broken_by_disagreement && c->is_broken.load() && c->broken_by_disagreement;
        if (first_failure.empty()) first_failure = c->broken;
      }
      // An operation may still be inside the backend (a detached progress thread, an inline
      // call past its deadline), and a broken backend must not be called again (for mpi: no
      // MPI_Comm_free, no MPI_Finalize, which would progress abandoned requests): leave the
      // communicator (backend, queues, threads) alive rather than destroy it under that operation.
      std::lock_guard lock(mutex_);  // (a dump may be reading the communicators)
      (void)c.release();
    }
  }
  // A rank's last operation may end before its peers' (a ring's last step is received by the
  // peer after the sender is done): closing connections now could cut a peer's operation short
  // (gloo then sees "connection closed by peer"). So healthy ranks first agree that every rank
  // is done, as MPI_Finalize does; a broken runtime does not wait for peers that may be gone,
  // unless what broke it was a disagreement, which every rank learned of alive (and one may
  // still be receiving the last of the exchange that told it).
  // MPI_Finalize is collective: a rank that finalizes MPI while a peer cannot (a broken runtime
  // leaves MPI as it is) waits in it for ever. So the ranks learn at the barrier whether any
  // rank ended broken, and then none finalizes MPI.
  bool every_rank_healthy = !any_broken;
  if (!any_broken || all_broken_by_disagreement)
    every_rank_healthy = quiesce(deadline, any_broken) && every_rank_healthy;
  else
    leave_without_waiting(first_failure);
  // No dumps from here on: the communicators go.
  unregister_for_dump_signal(recorder_.get());
  recorder_->detach();
  recorder_->place(RankPlace::kFinalized);
  // Destroy healthy groups and backends in reverse order of creation, then the world.
  fast_.count.store(0);
  for (auto it = groups_.rbegin(); it != groups_.rend(); ++it) communicators_[*it].reset();
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) communicators_[*it].reset();
  world_.store.reset();
  world_.server.reset();
  if (!every_rank_healthy) mpi_mark_unusable();
}

// finalize()'s barrier over the world's store. The rank that serves the store (rank 0 under
// mpirun) also waits until every rank has read the barrier's outcome before it stops serving
// (serves_last_reads). While it waits, the backends progress what this rank still owes its
// peers (Backend::progress: a peer may still be inside an operation that needs it). A rank that
// waits long says for whom, once, after `report_every` (a twentieth of the operation timeout,
// between 1 and 10 s). A failure here (a peer gone, the deadline passed) is reported, naming the
// ranks that never came, not thrown: finalize() goes on. The lanes are stopped and idle
// (finalize() checks): nothing else calls the backends now. A rank broken by a disagreement
// (`broken`) counts itself in "/broken" before it arrives, so every rank past the barrier knows
// whether all ended healthy: the result.
bool Runtime::quiesce(std::chrono::steady_clock::time_point deadline, bool broken) const {
  if (world_.size <= 1 || !world_.store) return true;
  const std::string key = finalize_key(world_, generation_);
  const auto progress = [&] {
    for (const auto& [name, c] : communicators_)
      if (c) c->backend->progress();  // (a communicator left to a broken backend is gone from here)
  };
  try {
    const auto left = [&] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    };
    if (broken) world_.store->add(key + "/broken", 1);
    const auto report_every = wait_report_after(std::chrono::milliseconds(timeout_ms_));
    world_.store->barrier_naming(
        key, world_.size, world_.rank, std::max(left(), std::chrono::milliseconds(1)), report_every,
        [&, said = false](const std::vector<int>& missing, std::chrono::milliseconds waited) mutable {
          if (std::exchange(said, true)) return;  // one line when the wait starts to matter, one at its end
          std::fprintf(stderr,
                       "chorus rt: finalize on rank %d: waiting for rank(s) %s to reach finalize (%.0f s so far; "
                       "gives up in %.0f s)\n",
                       world_.rank, rank_list(missing).c_str(), static_cast<double>(waited.count()) / 1000.0,
                       static_cast<double>(left().count()) / 1000.0);
          // The record of a rank that waits in finalize: what `chorus doctor` needs to say where
          // the others are not (under mpirun no launcher asks for it).
          recorder_->dump("finalize", fmt::format("waiting for rank(s) {} to reach finalize", rank_list(missing)));
        },
        progress);
    const std::int64_t broken_ranks = world_.store->add(key + "/broken", 0);
    world_.store->add(key + "/left", 1);
    if (!serves_last_reads(key, deadline, progress))
      throw TimeoutError("ranks still reading the finalize barrier at the deadline");
    if (broken_ranks > 0 && !broken && mpi_finalizes_at_exit())
      std::fprintf(stderr,
                   "chorus rt: finalize on rank %d: %lld rank(s) ended after a failure, so this rank does not "
                   "finalize MPI either (MPI_Finalize waits for every rank)\n",
                   world_.rank, static_cast<long long>(broken_ranks));
    return broken_ranks == 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "chorus rt: finalize on rank %d: the ranks did not all reach finalize (%s); tearing down anyway\n",
                 world_.rank, e.what());
    return false;
  }
}

// The rank whose exit ends the store (its server, or rank 0 of a world given by the caller:
// torch's store is usually served by its rank 0, whose exit would otherwise end a peer's last
// read of the barrier with a broken pipe) waits until every rank has left the barrier, or
// `until`; false if that came first. The others return at once.
bool Runtime::serves_last_reads(const std::string& key, std::chrono::steady_clock::time_point until,
                                const std::function<void()>& progress) const {
  if (!world_.server && !(world_.launcher == "external" && world_.rank == 0)) return true;
  while (world_.store->add(key + "/left", 0) < world_.size) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (progress) progress();
  }
  return true;
}

// A broken runtime does not wait for its peers to arrive (they may be gone), but it counts
// itself in finalize()'s barrier, broken, arrived and left, so that its healthy peers go on at
// once instead of waiting for it until their deadline (the operation timeout and 10 s more),
// and know that it ended broken (quiesce). If it serves the store, it gives the peers a short
// while (the wait-report interval) to read that before the store goes with it.
void Runtime::leave_without_waiting(const std::string& failure) const {
  if (world_.size <= 1 || !world_.store) return;
  const std::string key = finalize_key(world_, generation_);
  try {
    // Why this rank is ending, for a peer that finds it gone (BackendContext::failure_of).
    if (!failure.empty())
      world_.store->set_string(failure_key(world_.run_id, generation_, world_.rank), failure.substr(0, 400));
    world_.store->add(key + "/broken", 1);
    world_.store->arrive(key, world_.rank);
    world_.store->add(key + "/left", 1);
    static_cast<void>(serves_last_reads(
        key, std::chrono::steady_clock::now() + wait_report_after(std::chrono::milliseconds(timeout_ms_)), {}));
  } catch (const std::exception& e) {
    // The store went with the failure (its server was a peer that died): the peers can learn
    // nothing more from it either.
    std::fprintf(stderr, "chorus rt: finalize on rank %d: could not tell the peers (%s)\n", world_.rank, e.what());
  }
}

}  // namespace chorus::rt
