#include "rt/diagnostics/flight_recorder.h"

#include <bit>
#include <ctime>
#include <thread>

namespace chorus::rt {

const char* to_string(FlightLayer layer) {
  switch (layer) {
    case FlightLayer::kApi:
      return "api";
    case FlightLayer::kPython:
      return "python";
    case FlightLayer::kTorch:
      return "torch";
    case FlightLayer::kFusion:
      return "fusion";
    case FlightLayer::kCompression:
      return "compression";
    case FlightLayer::kExecutor:
      return "executor";
    case FlightLayer::kEnforcer:
      return "enforcer";
  }
  return "unknown";
}

const char* to_string(FlightState state) {
  switch (state) {
    case FlightState::kStarted:
      return "started";
    case FlightState::kCompleted:
      return "completed";
    case FlightState::kFailed:
      return "failed";
  }
  return "unknown";
}

thread_local constinit FlightLayer t_flight_layer = FlightLayer::kApi;
thread_local constinit const FlightEntry* t_flight_entry = nullptr;

FlightRing::FlightRing(std::size_t capacity, BeaconSlot* slot, bool shared, const std::atomic<std::uint64_t>* step)
    : capacity_(capacity == 0 ? 0 : std::bit_ceil(capacity)),
      entries_(capacity_ == 0 ? nullptr : new FlightEntry[capacity_]),
      slot_(slot),
      slot_shared_(shared),
      step_(step) {}

std::vector<FlightEntryCopy> FlightRing::snapshot() const {
  std::vector<FlightEntryCopy> out;
  const std::uint64_t n = operations();
  const std::uint64_t first = n > capacity_ ? n - capacity_ : 0;
  for (std::uint64_t i = first; i < n; ++i) {
    const FlightEntry& e = entries_[i & (capacity_ - 1)];
    const std::uint32_t v = e.version.load(std::memory_order_acquire);
    if (v % 2 != 0) continue;  // being rewritten by a newer operation
    FlightEntryCopy c{};
    const std::uint32_t kind = e.kind.load(std::memory_order_acquire);
    c.op = static_cast<CollectiveKind>(kind & 0xff);
    c.dtype = static_cast<DType>((kind >> 8) & 0xff);
    c.async = ((kind >> 16) & 1) != 0;
    c.layer = static_cast<FlightLayer>((kind >> 20) & 0xf);
    const std::int32_t who = e.root_or_peer.load(std::memory_order_acquire);
    c.seq = e.seq.load(std::memory_order_acquire);
    if (traits(c.op).rooted)
      c.root = who;
    else if (c.seq < 0)
      c.peer = who;
    c.count = e.count.load(std::memory_order_acquire);
    c.bytes = e.bytes.load(std::memory_order_acquire);
    c.started = e.started.load(std::memory_order_acquire);
    c.algorithm = e.algorithm.load(std::memory_order_acquire);
    c.step = e.step.load(std::memory_order_acquire);
    c.state = static_cast<FlightState>(e.state.load(std::memory_order_acquire));
    if (e.version.load(std::memory_order_relaxed) != v) continue;  // rewritten meanwhile
    out.push_back(c);
  }
  return out;
}

FlightRecorder::FlightRecorder(Identity identity, std::size_t capacity, const std::string& beacon_dir,
                               std::string dump_dir)
    : identity_(std::move(identity)), capacity_(capacity), dump_dir_(std::move(dump_dir)) {
  if (!beacon_dir.empty()) beacon_ = std::make_unique<Beacon>(beacon_dir, identity_.rank);
  tick0_ = flight_ticks();
  ns0_ = steady_now_ns();
  place_since_ns_.store(ns0_);
}

FlightRecorder::~FlightRecorder() = default;

std::unique_ptr<FlightRing> FlightRecorder::make_ring() {
  bool shared = false;
  BeaconSlot* slot = beacon_ ? beacon_->slot(&shared) : nullptr;
  return std::make_unique<FlightRing>(capacity_, slot, shared, &step_);
}

void FlightRecorder::place(RankPlace p) {
  place_since_ns_.store(steady_now_ns(), std::memory_order_relaxed);
  place_.store(static_cast<std::int64_t>(p), std::memory_order_release);
  if (beacon_) beacon_->place(p);
}

void FlightRecorder::set_source(Source source) {
  std::lock_guard lock(mutex_);
  source_ = std::move(source);
}

void FlightRecorder::detach() {
  std::lock_guard lock(mutex_);
  source_ = nullptr;
}

void FlightRecorder::dump_failure(std::string_view reason, std::string_view detail) {
  if (failure_dumped_.exchange(true)) return;
  dump(reason, detail);
}

FlightRecorder::TickScale FlightRecorder::tick_scale() const {
  TickScale scale{tick0_, ns0_, 1.0};
#if defined(__x86_64__) || defined(__i386__)
  // The counter's rate, from the pair taken at construction and one now; over less than 20 ms
  // the rate is too coarse, so wait until 20 ms have passed (dumps are rare).
  std::int64_t ns1 = steady_now_ns();
  if (ns1 - ns0_ < 20'000'000) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(20'000'000 - (ns1 - ns0_)));
    ns1 = steady_now_ns();
  }
  const std::uint64_t tick1 = flight_ticks();
  scale.ns_per_tick = static_cast<double>(ns1 - ns0_) / static_cast<double>(tick1 - tick0_);
#endif
  return scale;
}

std::int64_t FlightRecorder::TickScale::to_ns(std::uint64_t ticks) const {
#if defined(__x86_64__) || defined(__i386__)
  return ns0 + static_cast<std::int64_t>(static_cast<double>(static_cast<std::int64_t>(ticks - tick0)) * ns_per_tick);
#else
  return static_cast<std::int64_t>(ticks);
#endif
}

}  // namespace chorus::rt
