// The flight recorder (rt/diagnostics/flight_recorder.h): rings that keep the last operations,
// dumps on request, on a failure and on SIGUSR1, and the beacon's counters, with ranks as
// threads of this process (tests/rt/backends/thread_ranks.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "rt/diagnostics/beacon.h"
#include "rt/diagnostics/flight_recorder.h"
#include "core/error.h"
#include "rt/errors.h"
#include "rt/runtime_config.h"
#include "tests/rt/backends/thread_ranks.h"

namespace chorus::rt {
namespace {

namespace fs = std::filesystem;

// A fresh directory, and the variable naming it set for the runtimes of this test.
struct EnvDir {
  EnvDir(const char* variable, const std::string& tag) : name(variable) {
    path = fs::temp_directory_path() / fmt::format("chorus-flight-test-{}-{}", ::getpid(), tag);
    fs::remove_all(path);
    fs::create_directories(path);
    ::setenv(name, path.c_str(), 1);
  }
  ~EnvDir() {
    ::unsetenv(name);
    fs::remove_all(path);
  }
  const char* name;
  fs::path path;
};

nlohmann::json read_json(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

const nlohmann::json& communicator(const nlohmann::json& dump, const std::string& name) {
  for (const auto& c : dump.at("communicators"))
    if (c.at("name") == name) return c;
  throw std::runtime_error("no communicator " + name + " in the dump");
}

TEST(FlightRing, KeepsTheLastOperationsOldestFirstAndNumbersOnlyCollectives) {
  FlightRing ring(3, nullptr, false);  // rounded up to 4
  ASSERT_EQ(ring.capacity(), 4u);
  float x[8] = {};
  // 6 operations: all-reduce, send, broadcast (root 1), recv, all-reduce, barrier.
  const Call ops[] = {calls::all_reduce(x, x, 8, DType::f32, ReduceOp::sum),
                      calls::send(x, 3, DType::i32, 1),
                      calls::broadcast(x, 5, DType::f64, 1),
                      calls::recv(x, 2, DType::u8, 0),
                      calls::all_reduce(x, x, 7, DType::f32, ReduceOp::max),
                      calls::barrier()};
  for (int i = 0; i < 6; ++i) {
    FlightEntry* e = ring.begin(ops[i], 0, i == 3, FlightLayer::kApi);
    if (i != 5) ring.end(e, i != 4);  // the 5th fails, the 6th is still running
  }
  EXPECT_EQ(ring.operations(), 6u);
  EXPECT_EQ(ring.collectives(), 4u);  // all-reduce, broadcast, all-reduce, barrier
  const auto kept = ring.snapshot();
  ASSERT_EQ(kept.size(), 4u);  // the last 4: broadcast, recv, all-reduce, barrier
  EXPECT_EQ(kept[0].op, CollectiveKind::kBroadcast);
  EXPECT_EQ(kept[0].seq, 1);
  EXPECT_EQ(kept[0].root, 1);
  EXPECT_EQ(kept[0].count, 5u);
  EXPECT_EQ(kept[0].bytes, 40u);
  EXPECT_EQ(kept[1].op, CollectiveKind::kRecv);
  EXPECT_EQ(kept[1].seq, -1);
  EXPECT_EQ(kept[1].peer, 0);
  EXPECT_TRUE(kept[1].async);
  EXPECT_EQ(kept[1].state, FlightState::kCompleted);
  EXPECT_EQ(kept[2].seq, 2);
  EXPECT_EQ(kept[2].state, FlightState::kFailed);
  EXPECT_EQ(kept[3].op, CollectiveKind::kBarrier);
  EXPECT_EQ(kept[3].seq, 3);
  EXPECT_EQ(kept[3].state, FlightState::kStarted);
  EXPECT_LE(kept[0].started, kept[3].started);
}

// Each entry carries the step counter's value when it began; the running entry is the thread's
// t_flight_entry until it ends.
TEST(FlightRing, EntriesCarryTheStepAndTheRunningEntryIsTheThreads) {
  std::atomic<std::uint64_t> step{0};
  FlightRing ring(8, nullptr, false, &step);
  float x = 0;
  const Call ar = calls::all_reduce(&x, &x, 1, DType::f32, ReduceOp::sum);
  for (int i = 0; i < 5; ++i) {
    FlightEntry* e = ring.begin(ar, 0, false, FlightLayer::kApi);
    EXPECT_EQ(t_flight_entry, e);
    ring.end(e, true);
    EXPECT_EQ(t_flight_entry, nullptr);
    if (i == 1 || i == 2) step.fetch_add(1);  // steps: 0, 0, 1, 2, 2
  }
  const auto kept = ring.snapshot();
  ASSERT_EQ(kept.size(), 5u);
  const std::uint64_t want[] = {0, 0, 1, 2, 2};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(kept[i].step, want[i]) << i;
}

TEST(FlightRing, CapacityZeroRecordsNothing) {
  FlightRing ring(0, nullptr, false);
  float x = 0;
  EXPECT_EQ(ring.begin(calls::all_reduce(&x, &x, 1, DType::f32, ReduceOp::sum), 0, false, FlightLayer::kApi), nullptr);
  EXPECT_TRUE(ring.snapshot().empty());
}

// The recorder's size: InitOptions::record_entries, else CHORUS_RT_RECORD, else 256; bad values
// are errors naming the setting.
TEST(FlightSettings, EntriesComeFromTheOptionsThenTheEnvironment) {
  InitOptions o;
  EXPECT_EQ(resolve_settings(o).record_entries, 256u);
  ::setenv("CHORUS_RT_RECORD", "0", 1);
  EXPECT_EQ(resolve_settings(o).record_entries, 0u);
  o.record_entries = 1000;
  EXPECT_EQ(resolve_settings(o).record_entries, 1000u);
  ::setenv("CHORUS_RT_RECORD", "many", 1);
  EXPECT_EQ(resolve_settings(o).record_entries, 1000u);  // the option wins; the variable is not read
  o.record_entries = -1;
  try {
    resolve_settings(o);
    ADD_FAILURE() << "CHORUS_RT_RECORD=many was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("CHORUS_RT_RECORD"), std::string::npos) << e.what();
  }
  ::unsetenv("CHORUS_RT_RECORD");
  o.record_entries = -7;
  try {
    resolve_settings(o);
    ADD_FAILURE() << "record_entries -7 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("InitOptions::record_entries"), std::string::npos) << e.what();
  }
}

class FlightRecords : public ::testing::TestWithParam<std::string> {};

// Two ranks do 5 all-reduces of 1,009 f32 and a broadcast from rank 1, then each dumps on
// request: every operation is in its ring, numbered, completed, with its shape.
TEST_P(FlightRecords, ADumpOnRequestShowsEveryOperationNumberedWithItsShape) {
  const std::string backend = GetParam();
  EnvDir dumps("CHORUS_RT_DUMP", "request-" + backend);
  testing::spawn(2, {backend}, [&](Runtime& rt, int) {
    std::vector<float> in(1009, 1.0f), out(1009);
    for (int i = 0; i < 5; ++i) {
      rt.issue(backend, calls::all_reduce(in.data(), out.data(), 1009, DType::f32, ReduceOp::sum), false);
      if (i == 1 || i == 3) rt.mark_step();  // steps 0, 0, 1, 1, 2, and the broadcast 2
    }
    rt.issue(backend, calls::broadcast(out.data(), 16, DType::f32, 1), false);
    EXPECT_FALSE(rt.dump_flight_record("request").empty());
  });
  for (int r = 0; r < 2; ++r) {
    const auto d = read_json(dumps.path / fmt::format("rank-{}.json", r));
    EXPECT_EQ(d.at("format"), "chorus-flight-record");
    EXPECT_EQ(d.at("version"), 1);
    EXPECT_EQ(d.at("rank"), r);
    EXPECT_EQ(d.at("world_size"), 2);
    EXPECT_EQ(d.at("reason"), "request");
    EXPECT_EQ(d.at("where").at("place"), "running");
    EXPECT_EQ(d.at("steps_marked"), 2);
    const auto& c = communicator(d, backend);
    EXPECT_EQ(c.at("backend"), backend);
    EXPECT_EQ(c.at("ranks"), nlohmann::json::array({0, 1}));
    EXPECT_EQ(c.at("rank"), r);
    EXPECT_EQ(c.at("collectives"), 6);
    const auto& e = c.at("entries");
    ASSERT_EQ(e.size(), 6u);
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(e[i].at("seq"), i);
      EXPECT_EQ(e[i].at("op"), "all_reduce");
      EXPECT_EQ(e[i].at("dtype"), "f32");
      EXPECT_EQ(e[i].at("count"), 1009);
      EXPECT_EQ(e[i].at("bytes"), 4036);
      EXPECT_EQ(e[i].at("state"), "completed");
      EXPECT_EQ(e[i].at("layer"), "api");
      EXPECT_EQ(e[i].at("algorithm"), backend);
      EXPECT_EQ(e[i].at("step"), i / 2);
      if (i > 0) {
        EXPECT_LE(e[i - 1].at("started_ns").get<std::int64_t>(), e[i].at("started_ns").get<std::int64_t>());
      }
    }
    EXPECT_EQ(e[5].at("op"), "broadcast");
    EXPECT_EQ(e[5].at("root"), 1);
    EXPECT_EQ(e[5].at("step"), 2);
    EXPECT_LE(e[4].at("started_ns").get<std::int64_t>(), d.at("dumped_ns").get<std::int64_t>());
  }
}

// Ranks that disagree (rank 0 all-reduces 10 elements, rank 1 11) fail together, and each
// writes its record on the failure: reason disagreement, the failed call as its last entry.
TEST_P(FlightRecords, RanksThatDisagreeDumpOnTheFailure) {
  const std::string backend = GetParam();
  EnvDir dumps("CHORUS_RT_DUMP", "fail-" + backend);
  testing::spawn(2, {backend}, [&](Runtime& rt, int r) {
    std::vector<float> in(16, 1.0f), out(16);
    rt.issue(backend, calls::all_reduce(in.data(), out.data(), 4, DType::f32, ReduceOp::sum), false);
    EXPECT_THROW(
        rt.issue(backend, calls::all_reduce(in.data(), out.data(), r == 0 ? 10 : 11, DType::f32, ReduceOp::sum), false),
        DisagreementError);
  });
  for (int r = 0; r < 2; ++r) {
    const auto d = read_json(dumps.path / fmt::format("rank-{}.json", r));
    EXPECT_EQ(d.at("reason"), "disagreement");
    EXPECT_NE(d.at("detail").get<std::string>().find("disagree"), std::string::npos) << d.at("detail");
    const auto& e = communicator(d, backend).at("entries");
    ASSERT_EQ(e.size(), 2u);
    EXPECT_EQ(e[1].at("seq"), 1);
    EXPECT_EQ(e[1].at("count"), r == 0 ? 10 : 11);
    EXPECT_EQ(e[1].at("state"), "failed");
  }
}

// The beacon counts what the lanes started and ended, and says where the rank is.
TEST_P(FlightRecords, TheBeaconCountsOperationsAndSaysWhereTheRankIs) {
  const std::string backend = GetParam();
  EnvDir beacons("CHORUS_RT_BEACON", "beacon-" + backend);
  testing::spawn(2, {backend}, [&](Runtime& rt, int r) {
    std::vector<float> x(64, 1.0f);
    for (int i = 0; i < 3; ++i)
      rt.issue(backend, calls::all_reduce(x.data(), x.data(), 64, DType::f32, ReduceOp::sum), false);
    const auto b = read_beacon(beacon_path(beacons.path.string(), r));
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->rank, r);
    EXPECT_EQ(b->pid, ::getpid());
    EXPECT_EQ(b->place, RankPlace::kRunning);
    EXPECT_EQ(b->started, 3u);
    EXPECT_EQ(b->ended, 3u);
    EXPECT_FALSE(b->in_call());
  });
  for (int r = 0; r < 2; ++r) {
    const auto b = read_beacon(beacon_path(beacons.path.string(), r));
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->place, RankPlace::kFinalized);
  }
  EXPECT_FALSE(read_beacon((beacons.path / "no-such.beacon").string()).has_value());
}

// SIGUSR1 makes every runtime of the process dump (reason signal).
TEST_P(FlightRecords, SigusrOneMakesEveryRankDump) {
  const std::string backend = GetParam();
  EnvDir dumps("CHORUS_RT_DUMP", "signal-" + backend);
  testing::spawn(2, {backend}, [&](Runtime& rt, int r) {
    std::vector<float> x(8, 1.0f);
    rt.issue(backend, calls::all_reduce(x.data(), x.data(), 8, DType::f32, ReduceOp::sum), false);
    rt.issue(backend, calls::barrier(), false);  // both runtimes registered before the signal
    if (r == 0) ::kill(::getpid(), SIGUSR1);
    const auto mine = dumps.path / fmt::format("rank-{}.json", r);
    for (int i = 0; i < 500 && !fs::exists(mine); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    rt.issue(backend, calls::barrier(), false);  // neither ends before both have dumped
  });
  for (int r = 0; r < 2; ++r) {
    const auto d = read_json(dumps.path / fmt::format("rank-{}.json", r));
    EXPECT_EQ(d.at("reason"), "signal");
    EXPECT_EQ(communicator(d, backend).at("collectives").get<int>() >= 2, true);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, FlightRecords, ::testing::Values("shm", "gloo"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace chorus::rt
