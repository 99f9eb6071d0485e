// Tuning tables of the "auto" backend (docs/runtime-backends.md), then a lookup in what was parsed.
#include "fuzz_target.h"
#include "rt/tuning_table.h"

static void parse(const std::string& text) {
  const auto table = chorus::rt::TuningTable::parse(text, "fuzz.json");
  for (const auto& [key, rows] : table.tables)
    (void)table.pick(key.first, key.second, rows.empty() ? 0 : rows.front().bytes + 1, {"shm", "mpi", "gloo"});
  (void)chorus::rt::TuningTable::parse(table.to_json(), "round-trip");
}
CHORUS_FUZZ_TARGET(parse)
