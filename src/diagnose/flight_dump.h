#pragma once
// A rank's flight record as the runtime dumps it (`rank-<world rank>.json`, format
// "chorus-flight-record" version 1; docs/runtime.md, "When a job hangs or crawls"): where the
// rank was, and per communicator the ring of its last operations. The parser accepts exactly
// that format; every error is an InputError naming the file and the field.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace chorus::diagnose {

inline constexpr const char* kFlightFormat = "chorus-flight-record";
inline constexpr int kFlightVersion = 1;

// One operation of a ring.
struct FlightEntry {
  std::optional<std::int64_t> seq;  // collective sequence number; none for send / recv
  std::string op, algorithm, dtype, layer;
  std::int64_t count = 0, bytes = 0;
  int root = -1, peer = -1;
  bool async = false;
  std::string state;  // started | completed | failed
  std::int64_t started_ns = 0;
  std::int64_t step = 0;  // the rank's training step when it started (rt::mark_step; 0 unmarked)
};

// One communicator as this rank saw it.
struct FlightCommunicator {
  std::string name, backend;
  std::vector<int> ranks;  // world ranks of its members, in communicator-rank order
  int rank = 0, size = 0;
  std::int64_t collectives = 0, operations = 0, capacity = 0, dropped = 0;
  std::vector<FlightEntry> entries;  // oldest first
  // The entry still in flight (state started), the newest one; null when none.
  const FlightEntry* in_flight() const;
  // The entry of collective `seq`, null when the ring does not hold it.
  const FlightEntry* find_seq(std::int64_t seq) const;
};

struct FlightDump {
  std::string file;                       // where it was read from
  std::string job, host, reason, detail;  // reason: why it dumped (timeout, signal, finalize...)
  int rank = 0, world_size = 0;
  std::int64_t pid = 0;
  std::int64_t dumped_ns = 0, wall_offset_ns = 0;
  std::string place;  // starting | running | in_finalize | finalized
  std::int64_t place_since_ns = 0;
  std::int64_t steps_marked = 0;  // steps the program marked (rt::mark_step): 0 when it marks none
  // This rank's CLOCK_MONOTONIC offset to rank 0's (add it to get rank 0's clock) and its error
  // bound, as the runtime estimated them at init (rt/clock_offset.h; only with a communication log,
  // CHORUS_RT_LOG): none when the dump carries none.
  std::optional<std::int64_t> clock_to_rank0_ns;
  std::int64_t clock_error_ns = 0;
  std::vector<FlightCommunicator> communicators;
  const FlightCommunicator* find(const std::string& name) const;
};

// Parses one dump; `file` names it in errors ("FILE: field 'communicators[0].entries[2].state' ...").
FlightDump parse_flight_dump(const nlohmann::json& j, const std::string& file);
// Parses the text of one dump (InputError naming `file` when it is no JSON).
FlightDump parse_flight_dump_text(const std::string& text, const std::string& file);
// Reads and parses `path`.
FlightDump read_flight_dump(const std::string& path);

// The largest world a dump may name (what the doctor allocates per rank is bounded by it).
inline constexpr int kMaxWorldSize = 1 << 20;

}  // namespace chorus::diagnose
