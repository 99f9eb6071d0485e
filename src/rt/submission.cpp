// Issuing one operation: validation, the agreement on the call, inline or on the lane, the
// communication log, and a backend left broken by a communication failure.
#include <fmt/format.h>
#include <string>

#include "rt/agreement.h"
#include "rt/dispatch.h"
#include "rt/errors.h"
#include "rt/inline_call.h"
#include "rt/runtime_instance.h"
#include "rt/validation.h"

namespace chorus::rt {

namespace {

[[noreturn, gnu::cold, gnu::noinline]] void throw_broken(CommunicatorState& c) {
  std::lock_guard lock(c.broken_mutex);
  throw CommError(fmt::format("backend {} is unusable after an earlier failure: {}", c.backend->name(), c.broken));
}

// The first failure also writes the rank's flight record (diagnostics/flight_recorder.h).
[[gnu::cold, gnu::noinline]] void mark_broken(CommunicatorState& c, const CommError& e) {
  const bool disagreement = dynamic_cast<const DisagreementError*>(&e) != nullptr;
  if (c.break_with(e.what(), disagreement) && c.recorder)
    c.recorder->dump_failure(disagreement                                       ? "disagreement"
                             : dynamic_cast<const TimeoutError*>(&e) != nullptr ? "timeout"
                                                                                : "comm_error",
                             e.what());
}

// Rethrows a group's failure with its ranks mapped to world ranks (same exception type).
[[noreturn, gnu::cold, gnu::noinline]] void rethrow_in_group(const CommunicatorState& c, const CommError& e) {
  const std::string what = std::string(e.what()) + " " + c.group_note;
  if (dynamic_cast<const TimeoutError*>(&e) != nullptr) throw TimeoutError(what);
  if (dynamic_cast<const DisagreementError*>(&e) != nullptr) throw DisagreementError(what);
  throw CommError(what);
}

// Runs one operation on the communicator's backend (on whichever thread owns the lane):
// refuses a broken backend, agrees on the call first (`sig` non-null; not again when the ranks
// `agreed` on it already, Call::agreed), and marks the backend broken on a communication
// failure (its flight entry failed first: the failure dumps it).
template <typename Body>
[[gnu::always_inline]] inline void run_op(CommunicatorState& c, const CallSignature* sig, bool agreed, Body& body,
                                          FlightScope& flight) {
  if (c.is_broken.load(std::memory_order_acquire)) [[unlikely]]
    throw_broken(c);
  try {
    if (sig != nullptr) {
      if (c.agreement == CommunicatorState::Agreement::kFull) {
        check_agreement(*c.backend, *sig);
      } else if (const InlineCall ride = plan_inline(c.shape, *sig); ride.rides) {
        if (run_inline(*c.backend, c.shape, ride)) return;  // the exchange carried the call itself
      } else if (!agreed) {
        agree(*c.backend, c.shape, *sig);
      }
    }
    body(*c.backend);
  } catch (const CommError& e) {
    flight.failed();
    mark_broken(c, e);
    if (!c.group_note.empty() && std::string_view(e.what()).find(c.group_note) == std::string_view::npos)
      rethrow_in_group(c, e);
    throw;
  }
}

// The count the communication log shows: what this rank sends (the vector forms without one: to
// itself).
std::size_t logged_count(const Call& call, int rank) {
  return call.op == CollectiveKind::kAllToAll || call.op == CollectiveKind::kAllToAllv
             ? call.lists->send_counts[static_cast<std::size_t>(rank)]
             : call.count;
}

// The layer the flight recorder names: compression for a call that travels compressed, else
// the issuing thread's (ScopedFlightLayer).
FlightLayer flight_layer(const Call& call) { return call.compression ? FlightLayer::kCompression : t_flight_layer; }

CommRecord with_end(CommRecord r, bool ok) {
  r.ok = ok;
  r.end_ns = steady_now_ns();
  return r;
}

}  // namespace

Work Runtime::issue(std::string_view name, Call&& call, bool async_op) {
  std::size_t algorithm = 0;
  CommunicatorState& c = find(name, call.op, call.bytes(), traits(call.op).takes_algorithm ? &algorithm : nullptr);
  return submit(c, algorithm, std::move(call), async_op);
}

Work Runtime::issue(const Communicator& communicator, Call&& call, bool async_op) {
  const std::size_t algorithm =
      traits(call.op).takes_algorithm ? communicator.algorithms_[static_cast<std::size_t>(call.op)] : 0;
  if (algorithm == Communicator::kMissing) [[unlikely]]
    communicator.throw_missing_algorithm(call.op);
  return submit(*communicator.state_, algorithm, std::move(call), async_op);
}

Work Runtime::submit(CommunicatorState& c, std::size_t algorithm, Call&& call, bool async_op) {
  const OpTraits& t = traits(call.op);
  const Backend& b = *c.backend;
  validate(b, call);
  if (call.compression) [[unlikely]]
    algorithm = CommunicatorState::kCompressed;
  std::optional<CallSignature> sig;
  // Collectives agree first when the communicator does (agreement.h); on shm, calls with a
  // named algorithm do too: those run on the runtime's point-to-point algorithms, outside shm's
  // own signature check. Only collectives are numbered: point-to-point traffic legitimately
  // differs between ranks. Issuing from several threads onto one backend is allowed, but their
  // relative order is then up to the application (all ranks must agree on it).
  if (t.collective && c.agrees(algorithm)) {
    fill_signature(sig.emplace(), call, c.rank, c.world_size, algorithm);
    sig->sequence = c.sequence.fetch_add(1, std::memory_order_relaxed);
  }
  const ReduceOp wire = c.wire_op(call.reduce_op);
  CommunicatorState::Lane& lane = c.lane_for(call.op);
  if (async_op || !lane.queue->try_claim())
    return enqueue(c, lane, algorithm, wire, std::move(call), std::move(sig), async_op);
  // Synchronous on an idle lane: run here, on the caller's Call, no task object.
  struct Release {
    ProgressQueue& queue;
    ~Release() { queue.release(); }
  } release{*lane.queue};
  const auto body = [&](Backend& x) { dispatch(x, call, algorithm, wire); };
  FlightScope flight{*lane.ring, lane.ring->begin(call, algorithm, false, flight_layer(call))};
  CommLog* log = log_.get();
  if (log == nullptr) [[likely]] {
    run_op(c, sig ? &*sig : nullptr, call.agreed, body, flight);
    flight.completed();
    return Work();
  }
  const std::int64_t issue = steady_now_ns();
  const CommRecord record{call.op, logged_count(call, b.rank()), call.dtype, async_op, false, issue, issue, 0};
  try {
    run_op(c, sig ? &*sig : nullptr, call.agreed, body, flight);
  } catch (...) {
    log->record(c.label_of(call.op, algorithm), with_end(record, false));
    throw;
  }
  flight.completed();
  log->record(c.label_of(call.op, algorithm), with_end(record, true));
  return Work();
}

// The queued path: the operation, its Call moved in, runs on the lane's thread; with a
// communication log, its issue, start and end times are recorded.
Work Runtime::enqueue(CommunicatorState& c, CommunicatorState::Lane& lane, std::size_t algorithm, ReduceOp wire,
                      Call&& call, std::optional<CallSignature>&& sig, bool async_op) {
  const int rank = c.backend->rank();
  const std::size_t count = logged_count(call, rank);
  auto state = std::make_shared<WorkState>(fmt::format("rank {}: {} on {} ({} x {})", rank, to_string(call.op),
                                                       c.backend->name(), count, to_string(call.dtype)),
                                           lane.activity, lane.queue.get());
  const std::int64_t issue = log_ ? steady_now_ns() : 0;
  const CommRecord record{call.op, count, call.dtype, async_op, false, issue, 0, 0};
  const FlightLayer layer = flight_layer(call);  // (the issuing thread's)
  lane.queue->post([state, &c, sig = std::move(sig), call = std::move(call), algorithm, wire, activity = lane.activity,
                    log = log_, record, ring = lane.ring.get(), layer]() mutable {
    const auto start = steady_now_ns();
    activity->running_since_ns.store(start);
    const auto body = [&](Backend& x) { dispatch(x, call, algorithm, wire); };
    CommRecord r = record;
    r.start_ns = start;
    FlightScope flight{*ring, ring->begin(call, algorithm, r.async_op, layer)};
    try {
      run_op(c, sig ? &*sig : nullptr, call.agreed, body, flight);
    } catch (...) {
      activity->running_since_ns.store(0);
      if (log != nullptr) log->record(c.label_of(call.op, algorithm), with_end(r, false));
      state->complete(std::current_exception());
      return;
    }
    flight.completed();
    activity->running_since_ns.store(0);
    if (log != nullptr) log->record(c.label_of(call.op, algorithm), with_end(r, true));
    state->complete(nullptr);
  });
  Work w(state);
  if (!async_op) w.wait();
  return w;
}

}  // namespace chorus::rt
