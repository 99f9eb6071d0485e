#pragma once
// Stragglers: which rank arrives last at the collectives (a job that crawls rather than hangs).
// For every collective seq that several ranks started, the last arriver (the latest start) and
// the skew (last start minus first); per rank, how often it was last and the time the others
// lost waiting for it (the sum, over the collectives it was last at, of its start minus each
// other member's). One implementation (find_stragglers over CollectiveStarts), two inputs: the
// ranks' flight records (`chorus doctor --stragglers`: their rings; ranks of one host share
// CLOCK_MONOTONIC, across hosts rank 0's clock by the dumps' offsets, else the wall clock) and
// the communication logs (`chorus profile`, rt_bench/comm_profile.h).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diagnose/dump_set.h"

namespace chorus::diagnose {

// One rank's start of one collective: the analysis's input.
struct CollectiveStart {
  std::string communicator, op;
  std::int64_t seq = 0;  // the collective's number on its communicator: the same call on every rank
  int rank = 0;          // world rank
  std::int64_t start_ns = 0;
};

struct Arrival {
  std::string communicator, op;
  std::int64_t seq = 0;
  int ranks = 0;       // the rings that hold it
  int last_rank = -1;  // world rank; -1 when several started last at the same nanosecond
  double skew_s = 0;
};

struct Lateness {
  int rank = 0;
  int last = 0;      // collectives it was last at
  int compared = 0;  // collectives it took part in (of those compared)
  double others_lost_s = 0;
};

struct StragglerReport {
  bool cross_host = false;        // the starts are of several hosts: wall-clock times compared
  std::string clock;              // which clock the starts are on, when the caller says (else by cross_host)
  std::vector<Arrival> arrivals;  // by communicator, then seq
  std::vector<Lateness> ranks;    // by rank
  std::vector<int> stragglers;    // ranks last at more than two thirds of at least 3 collectives they took part in
};

// `starts` in any order; `cross_host` only says which clock they are on.
StragglerReport find_stragglers(const std::vector<CollectiveStart>& starts, bool cross_host);
// The starts of the collectives in the dumps' rings.
StragglerReport find_stragglers(const DumpSet& set);
std::string to_text(const StragglerReport& r);
nlohmann::json to_json(const StragglerReport& r);

}  // namespace chorus::diagnose
