#pragma once
// Each host has its own CLOCK_MONOTONIC, so the communication logs of ranks on different hosts
// cannot be compared as they are. With a log, init() estimates every rank's offset to rank 0's
// clock through the store, as NTP does: rank r sends a ping (a key), rank 0 answers with its clock
// (another key), and of a few rounds the one with the shortest round trip gives
//   offset = rank 0's reading - (send + receive) / 2   (this rank's clock + offset = rank 0's),
// off by at most half that round trip (whatever the two legs' asymmetry). Rank 0 answers the ranks
// one after another. A rank that does not take part (its log off while rank 0's is on, or the
// other way round) leaves the other side waiting `timeout`, then without an estimate: init goes on.
#include <chrono>
#include <cstdint>
#include <string>

#include "rt/rendezvous/store.h"

namespace chorus::rt {

struct ClockOffset {
  std::int64_t to_rank0_ns = 0;  // add to this rank's CLOCK_MONOTONIC ns to get rank 0's
  std::int64_t error_ns = 0;     // |true - estimated| <= error_ns (half the shortest round trip); -1: unknown
};

inline constexpr int kClockRounds = 5;
// How long init() waits for the other side (or the operation timeout, if shorter).
inline constexpr std::chrono::milliseconds kClockWait{10'000};

// Collective over the world (every rank calls it, with the same `prefix`); rank 0 returns {0, 0}.
// Never throws: a store that fails or times out gives {0, -1}.
ClockOffset estimate_clock_offset(Store& store, const std::string& prefix, int rank, int size,
                                  std::chrono::milliseconds timeout);

}  // namespace chorus::rt
