#pragma once
// The launcher's watch over the ranks' beacons (rt/diagnostics/beacon.h) for `chorus launch
// --stall-timeout S`: the job has stalled when no rank's beacon has changed (operations started
// or ended, place) for S seconds while at least one rank is in a call or in finalize. Ranks that
// are all outside chorus (computing) are never stalled, however long they take.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "rt/diagnostics/beacon.h"

namespace chorus::launch {

class StallWatch {
 public:
  using Clock = std::chrono::steady_clock;
  // Beacons are read at most every this often.
  static constexpr std::chrono::milliseconds kPollInterval{150};

  // `timeout_s` 0: beacons are still read (readings()), a stall is never reported.
  StallWatch(std::string beacon_dir, std::size_t ranks, double timeout_s);

  // Reads the beacons if kPollInterval has passed; true once the job has stalled.
  bool poll(Clock::time_point now);
  // Reads every beacon now.
  void refresh();
  // The last reading of each rank's beacon (nullopt: none yet).
  const std::vector<std::optional<rt::BeaconReading>>& readings() const { return readings_; }
  bool any_beacon() const;

 private:
  std::string dir_;
  double timeout_s_;
  std::vector<std::optional<rt::BeaconReading>> readings_;
  Clock::time_point last_poll_{}, last_change_{};
  bool started_ = false;
};

}  // namespace chorus::launch
