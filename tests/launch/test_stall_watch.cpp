// The launcher's stall watch (launch/stall_watch.h) over real beacon files, with the time given:
// a stall is no change for the timeout while a rank is in a call or in finalize; ranks outside
// chorus are never stalled; any change (an operation started or ended, a place) restarts the
// timer; a timeout of 0 never stalls.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "launch/stall_watch.h"
#include "rt/diagnostics/beacon.h"

namespace {

using chorus::launch::StallWatch;
using chorus::rt::Beacon;
using chorus::rt::RankPlace;
using namespace std::chrono_literals;

struct BeaconDir {
  std::string path;
  BeaconDir() {
    std::string templ = std::filesystem::temp_directory_path().string() + "/stall-watch-test-XXXXXX";
    path = ::mkdtemp(templ.data()) != nullptr ? templ : "";
  }
  ~BeaconDir() { std::filesystem::remove_all(path); }
};

TEST(StallWatch, NoBeaconNeverStalls) {
  BeaconDir dir;
  StallWatch w(dir.path, 2, 1.0);
  const auto t0 = StallWatch::Clock::now();
  EXPECT_FALSE(w.poll(t0));
  EXPECT_FALSE(w.poll(t0 + 10s));
  EXPECT_FALSE(w.any_beacon());
}

TEST(StallWatch, ARankInACallWithoutProgressStallsAfterTheTimeout) {
  BeaconDir dir;
  Beacon b0(dir.path, 0), b1(dir.path, 1);
  b0.place(RankPlace::kRunning);
  b1.place(RankPlace::kRunning);
  bool shared = false;
  b0.slot(&shared)->started.store(1);  // rank 0 in a call, rank 1 outside
  StallWatch w(dir.path, 2, 2.0);
  const auto t0 = StallWatch::Clock::now();
  EXPECT_FALSE(w.poll(t0));
  EXPECT_FALSE(w.poll(t0 + 1900ms));
  EXPECT_TRUE(w.poll(t0 + 2100ms));
  ASSERT_TRUE(w.readings()[0].has_value());
  EXPECT_TRUE(w.readings()[0]->in_call());
  EXPECT_FALSE(w.readings()[1]->in_call());
}

TEST(StallWatch, ProgressRestartsTheTimer) {
  BeaconDir dir;
  Beacon b0(dir.path, 0);
  b0.place(RankPlace::kRunning);
  bool shared = false;
  auto* slot = b0.slot(&shared);
  slot->started.store(1);
  StallWatch w(dir.path, 1, 2.0);
  const auto t0 = StallWatch::Clock::now();
  EXPECT_FALSE(w.poll(t0));
  slot->ended.store(1);
  slot->started.store(2);  // one ended, the next started: progress at t0 + 1.5 s
  EXPECT_FALSE(w.poll(t0 + 1500ms));
  EXPECT_FALSE(w.poll(t0 + 3000ms));  // 1.5 s since the change
  EXPECT_TRUE(w.poll(t0 + 3600ms));   // 2.1 s since the change
}

TEST(StallWatch, RanksOutsideChorusNeverStall) {
  BeaconDir dir;
  Beacon b0(dir.path, 0), b1(dir.path, 1);
  b0.place(RankPlace::kRunning);
  b1.place(RankPlace::kRunning);
  StallWatch w(dir.path, 2, 1.0);
  const auto t0 = StallWatch::Clock::now();
  for (int s = 0; s <= 60; s += 5) EXPECT_FALSE(w.poll(t0 + std::chrono::seconds(s))) << s;
  // Rank 1 enters finalize at t0 + 60 s (a change): the timer starts only then.
  b1.place(RankPlace::kInFinalize);
  EXPECT_FALSE(w.poll(t0 + 60s + 200ms));
  EXPECT_FALSE(w.poll(t0 + 61s));
  EXPECT_TRUE(w.poll(t0 + 61s + 300ms));
}

TEST(StallWatch, ATimeoutOfZeroNeverStalls) {
  BeaconDir dir;
  Beacon b0(dir.path, 0);
  bool shared = false;
  b0.slot(&shared)->started.store(1);
  StallWatch w(dir.path, 1, 0.0);
  const auto t0 = StallWatch::Clock::now();
  EXPECT_FALSE(w.poll(t0));
  EXPECT_FALSE(w.poll(t0 + 1h));
  EXPECT_TRUE(w.any_beacon());
}

}  // namespace
