#pragma once
// A rank's beacon: a small file, mapped shared, in which the runtime keeps counters of the
// operations its lanes have started and ended and where the rank is (outside chorus, in a call,
// in finalize). A supervisor (chorus launch --stall-timeout) reads the beacons of all ranks to
// see whether the job still makes progress, without asking the ranks anything: a stopped or
// hung rank's beacon still says where it was. The runtime maps one when CHORUS_RT_BEACON names a
// directory (the launcher sets it): `<dir>/rank-<world rank>.beacon`.
//
// Layout (native byte order, one host): the magic "CHORUSB1" (its 8 bytes as one word, stored
// last by the writer with release), then the fields below. Each lane
// of each communicator owns one slot and is its only writer, so an update is a plain store;
// lanes past the slots share the last one through atomic additions.
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

namespace chorus::rt {

// Where a rank is, as its beacon and its flight record say it.
enum class RankPlace : std::int64_t { kStarting = 0, kRunning = 1, kInFinalize = 2, kFinalized = 3 };
const char* to_string(RankPlace place);

struct BeaconSlot {
  std::atomic<std::uint64_t> started{0}, ended{0};
};

struct BeaconLayout {
  static constexpr std::size_t kSlots = 124;
  std::atomic<std::uint64_t> magic;
  std::uint32_t version;
  std::int32_t rank;
  std::int64_t pid;
  std::atomic<std::int64_t> place;     // RankPlace
  std::atomic<std::int64_t> since_ns;  // CLOCK_MONOTONIC ns when `place` last changed
  std::atomic<std::uint32_t> slots_used;
  std::uint32_t reserved;
  BeaconSlot slots[kSlots];
};
static_assert(sizeof(BeaconLayout) <= 4096);

// The writer's side: one per Runtime (rank), mapped for its lifetime; a no-op when not enabled.
class Beacon {
 public:
  Beacon() = default;
  // Maps `<dir>/rank-<rank>.beacon` (created, truncated). Throws CommError naming the file.
  Beacon(const std::string& dir, int rank);
  ~Beacon();
  Beacon(const Beacon&) = delete;
  Beacon& operator=(const Beacon&) = delete;

  bool enabled() const { return layout_ != nullptr; }
  // A slot for one lane, its only writer; past kSlots, the last slot, shared (`*shared` set:
  // counted in by atomic additions). Null when not enabled.
  BeaconSlot* slot(bool* shared);
  void place(RankPlace p);

 private:
  BeaconLayout* layout_ = nullptr;
  std::string path_;
};

// The reader's side: a snapshot of a beacon file.
struct BeaconReading {
  int rank = -1;
  std::int64_t pid = 0;
  RankPlace place = RankPlace::kStarting;
  std::int64_t since_ns = 0;
  std::uint64_t started = 0, ended = 0;  // over every slot
  bool in_call() const { return started > ended; }
};
// Reads `path`; nullopt when it does not exist yet or is not a beacon (wrong magic or size).
std::optional<BeaconReading> read_beacon(const std::string& path);
// `<dir>/rank-<rank>.beacon`
std::string beacon_path(const std::string& dir, int rank);

}  // namespace chorus::rt
