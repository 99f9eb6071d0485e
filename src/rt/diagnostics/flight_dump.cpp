// FlightRecorder::dump: the rank's record as JSON (the format chorus doctor reads; docs/runtime.md
// "When a job hangs or crawls"), written to a temporary name and renamed, so that a reader sees a
// whole file or none.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "rt/diagnostics/flight_recorder.h"
#include "rt/rendezvous/bootstrap.h"
#include "rt/types.h"

namespace chorus::rt {

namespace {

nlohmann::json entry_json(const FlightEntryCopy& e, const FlightCommunicatorView& c,
                          const FlightRecorder::TickScale& scale) {
  nlohmann::json j;
  j["seq"] = e.seq < 0 ? nlohmann::json(nullptr) : nlohmann::json(e.seq);
  j["op"] = std::string(to_string(e.op));
  j["algorithm"] = c.label_of ? c.label_of(e.op, e.algorithm) : c.name;
  j["dtype"] = std::string(to_string(e.dtype));
  j["count"] = e.count;
  j["bytes"] = e.bytes;
  j["root"] = e.root;
  j["peer"] = e.peer;
  j["async"] = e.async;
  j["layer"] = to_string(e.layer);
  j["state"] = to_string(e.state);
  j["started_ns"] = scale.to_ns(e.started);
  j["step"] = e.step;
  return j;
}

nlohmann::json communicator_json(const FlightCommunicatorView& c, const FlightRecorder::TickScale& scale,
                                 std::size_t capacity) {
  std::vector<FlightEntryCopy> all;
  std::uint64_t operations = 0, dropped = 0, collectives = 0;
  for (std::size_t l = 0; l < c.lanes.size(); ++l) {
    const FlightRing& ring = *c.lanes[l];
    const std::uint64_t n = ring.operations();
    operations += n;
    dropped += n > ring.capacity() ? n - ring.capacity() : 0;
    if (l == 0) collectives = ring.collectives();  // lane 0 runs the collectives
    for (const auto& e : ring.snapshot()) all.push_back(e);
  }
  // The lanes' entries merged in the order they started.
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.started < b.started; });
  nlohmann::json j;
  j["name"] = c.name;
  j["backend"] = c.backend;
  j["ranks"] = c.ranks;
  j["rank"] = c.rank;
  j["size"] = c.size;
  j["collectives"] = collectives;
  j["operations"] = operations;
  j["capacity"] = capacity;
  j["dropped"] = dropped;
  j["entries"] = nlohmann::json::array();
  for (const auto& e : all) j["entries"].push_back(entry_json(e, c, scale));
  return j;
}

std::int64_t wall_offset_ns() {
  timespec mono{}, wall{};
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &wall);
  return (static_cast<std::int64_t>(wall.tv_sec) - mono.tv_sec) * 1'000'000'000 + (wall.tv_nsec - mono.tv_nsec);
}

}  // namespace

std::string default_dump_dir(const std::string& job) {
  const char* tmp = std::getenv("TMPDIR");
  return fmt::format("{}/chorus-dumps/{}", tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", job);
}

std::string FlightRecorder::dump(std::string_view reason, std::string_view detail) const {
  const std::string dir = dump_dir_.empty() ? default_dump_dir(identity_.job) : dump_dir_;
  const std::string path = fmt::format("{}/rank-{}.json", dir, identity_.rank);
  try {
    const TickScale scale = tick_scale();
    nlohmann::json j;
    j["format"] = "chorus-flight-record";
    j["version"] = 1;
    j["job"] = identity_.job;
    j["rank"] = identity_.rank;
    j["world_size"] = identity_.world_size;
    j["pid"] = static_cast<std::int64_t>(::getpid());
    j["host"] = host_name();
    j["reason"] = std::string(reason);
    j["detail"] = std::string(detail);
    j["dumped_ns"] = steady_now_ns();
    j["wall_offset_ns"] = wall_offset_ns();
    j["where"] = {{"place", to_string(place())}, {"since_ns", place_since_ns_.load()}};
    j["steps_marked"] = step();  // 0: the program marks no steps
    if (clock_error_ns_ >= 0) {  // the offset estimated at init (a log): `chorus doctor --stragglers` across hosts
      j["clock_to_rank0_ns"] = clock_to_rank0_ns_;
      j["clock_error_ns"] = clock_error_ns_;
    }
    j["communicators"] = nlohmann::json::array();
    {
      std::lock_guard lock(mutex_);
      if (source_)
        for (const auto& c : source_()) j["communicators"].push_back(communicator_json(c, scale, capacity_));
    }
    std::filesystem::create_directories(dir);
    const std::string tmp = fmt::format("{}.{}.tmp", path, ::getpid());
    {
      std::ofstream out(tmp);
      out << j.dump(1) << '\n';
      if (!out.flush()) throw std::runtime_error("cannot write " + tmp);
    }
    std::filesystem::rename(tmp, path);
    std::fprintf(stderr, "chorus rt: rank %d: flight record (%.*s) written to %s\n", identity_.rank,
                 static_cast<int>(reason.size()), reason.data(), path.c_str());
    return path;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chorus rt: rank %d: could not write the flight record to %s: %s\n", identity_.rank,
                 path.c_str(), e.what());
    return {};
  }
}

}  // namespace chorus::rt
