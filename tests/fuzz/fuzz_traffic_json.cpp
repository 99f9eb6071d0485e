// TopoOpt traffic files (docs/topoopt.md) for 16 servers: parse, then run TopologyFinder on what
// parsed, at degree 3 — its own checks (degree, connectivity) throw logic_error, a crash here.
#include "fuzz_target.h"
#include "topoopt/topology_finder.h"
#include "topoopt/traffic.h"

static void parse(const std::string& text) {
  const auto traffic = chorus::topoopt::parse_traffic_json(text, 16, "fuzz.json");
  (void)chorus::topoopt::topology_finder(16, 3, traffic);
}
CHORUS_FUZZ_TARGET(parse)
