#pragma once
// A directory of flight records as one job left it: every `rank-<R>.json` and, if present, the
// launcher's `launcher.json` (what the doctor reads). Files of other names (the runtime's
// temporary names before its rename) are ignored.
#include <optional>
#include <string>
#include <vector>

#include "diagnose/flight_dump.h"
#include "diagnose/launcher_record.h"

namespace chorus::diagnose {

struct DumpSet {
  std::string dir;
  std::vector<FlightDump> dumps;  // by rank
  std::optional<LauncherRecord> launcher;
  int world_size = 0;                 // the largest any dump or the launcher names
  std::vector<std::string> warnings;  // dumps of several jobs, world sizes that differ
  const FlightDump* find(int rank) const;
  // Ranks of the world without a dump.
  std::vector<int> missing_ranks() const;
};

// Reads `dir`: InputError naming it when it is no directory or holds no rank-*.json, naming the
// file and field of a dump or launcher.json that cannot be read.
DumpSet read_dump_dir(const std::string& dir);

}  // namespace chorus::diagnose
