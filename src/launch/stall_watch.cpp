#include "launch/stall_watch.h"

#include <utility>

namespace chorus::launch {

namespace {

bool same(const std::optional<rt::BeaconReading>& a, const std::optional<rt::BeaconReading>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->pid == b->pid && a->place == b->place && a->since_ns == b->since_ns && a->started == b->started &&
         a->ended == b->ended;
}

// A rank that waits for others: in a call, or in finalize (which waits for every rank).
bool waiting(const std::optional<rt::BeaconReading>& r) {
  return r && (r->in_call() || r->place == rt::RankPlace::kInFinalize);
}

}  // namespace

StallWatch::StallWatch(std::string beacon_dir, std::size_t ranks, double timeout_s)
    : dir_(std::move(beacon_dir)), timeout_s_(timeout_s), readings_(ranks) {}

void StallWatch::refresh() {
  for (std::size_t r = 0; r < readings_.size(); ++r)
    readings_[r] = rt::read_beacon(rt::beacon_path(dir_, static_cast<int>(r)));
}

bool StallWatch::any_beacon() const {
  for (const auto& r : readings_)
    if (r) return true;
  return false;
}

bool StallWatch::poll(Clock::time_point now) {
  if (started_ && now - last_poll_ < kPollInterval) return false;
  last_poll_ = now;
  const auto before = readings_;
  refresh();
  bool changed = !started_, someone_waits = false;
  started_ = true;
  for (std::size_t r = 0; r < readings_.size(); ++r) {
    changed = changed || !same(before[r], readings_[r]);
    someone_waits = someone_waits || waiting(readings_[r]);
  }
  // The timer runs only while someone waits and nothing moves.
  if (changed || !someone_waits) last_change_ = now;
  return timeout_s_ > 0 && now - last_change_ >= std::chrono::duration<double>(timeout_s_);
}

}  // namespace chorus::launch
