// A rank's flight record (docs/runtime.md, "When a job hangs or crawls"): parsed; what parsed is
// diagnosed, alone and beside a copy of itself as another rank, as text, JSON and stragglers.
// The same bytes as the launcher's record (launcher.json).
#include <nlohmann/json.hpp>

#include "diagnose/diagnosis.h"
#include "diagnose/dump_set.h"
#include "diagnose/flight_dump.h"
#include "diagnose/launcher_record.h"
#include "diagnose/stragglers.h"
#include "fuzz_target.h"

static void diagnose_all(const chorus::diagnose::DumpSet& set) {
  const auto d = chorus::diagnose::diagnose(set);
  (void)chorus::diagnose::to_text(d);
  (void)chorus::diagnose::to_json(d).dump();
  const auto s = chorus::diagnose::find_stragglers(set);
  (void)chorus::diagnose::to_text(s);
  (void)chorus::diagnose::to_json(s).dump();
}

static void parse(const std::string& text) {
  try {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_discarded()) (void)chorus::diagnose::parse_launcher_record(j, "launcher.json");
  } catch (const chorus::InputError&) {
  }
  chorus::diagnose::DumpSet set;
  set.dir = "fuzz";
  set.dumps.push_back(chorus::diagnose::parse_flight_dump_text(text, "rank-0.json"));
  set.world_size = set.dumps[0].world_size;
  diagnose_all(set);
  // The same record as a second rank of the world (a rank next to it), as another job.
  chorus::diagnose::FlightDump other = set.dumps[0];
  other.rank = (other.rank + 1) % other.world_size;
  other.job += "x";
  if (other.rank != set.dumps[0].rank) set.dumps.push_back(other);
  diagnose_all(set);
}
CHORUS_FUZZ_TARGET(parse)
