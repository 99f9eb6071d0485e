// A rank for the launcher's stall tests (test_stall.py): it maps its beacon as the runtime does
// (CHORUS_RT_BEACON), did three collectives on a communicator 'shm' of two ranks, and then, by
// its mode:
//   stall    rank 0 starts a fourth and never ends it, rank 1 stays outside chorus;
//   fail     as stall, but rank 1 exits with status 3 after 0.5 s;
//   stop     as stall, but rank 1 stops itself (SIGSTOP);
//   compute  both stay outside chorus for 3 s, then exit 0 (not a stall).
// On SIGUSR1 it writes a minimal flight record to CHORUS_RT_DUMP/rank-R.json (a temporary name,
// then renamed). It prints its beacon directory on stdout.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "rt/diagnostics/beacon.h"

namespace {

volatile sig_atomic_t dump_asked = 0;

void on_usr1(int) { dump_asked = 1; }

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::string entry(int seq, const char* state, std::int64_t started) {
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "{\"seq\": %d, \"op\": \"all_reduce\", \"algorithm\": \"shm\", \"dtype\": \"f32\", \"count\": 1009, "
                "\"bytes\": 4036, \"root\": -1, \"peer\": -1, \"async\": false, \"layer\": \"api\", \"state\": \"%s\", "
                "\"started_ns\": %lld}",
                seq, state, static_cast<long long>(started));
  return buf;
}

void write_dump(int rank, bool in_call, std::int64_t t0) {
  const char* dir = std::getenv("CHORUS_RT_DUMP");
  if (dir == nullptr) return;
  std::string entries;
  for (int s = 0; s < 3; ++s) entries += (s ? ", " : "") + entry(s, "completed", t0 + s * 1000);
  if (in_call) entries += ", " + entry(3, "started", t0 + 3000);
  const std::string path = std::string(dir) + "/rank-" + std::to_string(rank) + ".json";
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return;
  std::fprintf(f,
               "{\"format\": \"chorus-flight-record\", \"version\": 1, \"job\": \"%s\", \"rank\": %d, "
               "\"world_size\": 2, \"pid\": %d, \"host\": \"here\", \"reason\": \"signal\", \"detail\": \"\", "
               "\"dumped_ns\": %lld, \"wall_offset_ns\": 0, \"where\": {\"place\": \"running\", \"since_ns\": %lld}, "
               "\"communicators\": [{\"name\": \"shm\", \"backend\": \"shm\", \"ranks\": [0, 1], \"rank\": %d, "
               "\"size\": 2, \"collectives\": %d, \"operations\": %d, \"capacity\": 256, \"dropped\": 0, "
               "\"entries\": [%s]}]}\n",
               std::getenv("CHORUS_RUN_ID") ? std::getenv("CHORUS_RUN_ID") : "", rank, static_cast<int>(::getpid()),
               static_cast<long long>(now_ns()), static_cast<long long>(t0), rank, in_call ? 4 : 3, in_call ? 4 : 3,
               entries.c_str());
  std::fclose(f);
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "stall";
  const int rank = std::atoi(std::getenv("CHORUS_RANK") ? std::getenv("CHORUS_RANK") : "0");
  const char* beacon_dir = std::getenv("CHORUS_RT_BEACON");
  if (beacon_dir == nullptr) {
    std::fprintf(stderr, "beacon_rank: no CHORUS_RT_BEACON\n");
    return 1;
  }
  std::printf("beacon dir %s\n", beacon_dir);
  std::fflush(stdout);
  struct sigaction sa {};
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, nullptr);
  chorus::rt::Beacon beacon(beacon_dir, rank);
  beacon.place(chorus::rt::RankPlace::kRunning);
  bool shared = false;
  chorus::rt::BeaconSlot* slot = beacon.slot(&shared);
  slot->started.store(3);
  slot->ended.store(3);
  const std::int64_t t0 = now_ns();
  const bool in_call = rank == 0 && mode != "compute";
  if (in_call) slot->started.fetch_add(1);
  if (rank == 1 && mode == "stop") ::raise(SIGSTOP);
  const std::int64_t until = now_ns() + (mode == "compute" ? 3'000'000'000LL : 120'000'000'000LL);
  while (now_ns() < until) {
    if (dump_asked) {
      dump_asked = 0;
      write_dump(rank, in_call, t0);
    }
    if (rank == 1 && mode == "fail" && now_ns() - t0 > 500'000'000) return 3;
    ::usleep(10'000);
  }
  return mode == "compute" ? 0 : 1;
}
