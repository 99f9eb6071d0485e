// Chakra execution traces: the length-delimited stream reader and the import into the DAG
// (attributes, dependencies, cycles) on a small two-dimensional network.
#include "fuzz_target.h"
#include "workload/chakra/chakra_import.h"

static void parse(const std::string& bytes) {
  static const chorus::net::Network network = [] {
    chorus::net::Network n;
    n.name = "fuzz";
    n.dims.push_back(chorus::net::Dimension{chorus::net::DimKind::kRing, 4, 100.0, 1, 500});
    n.dims.push_back(chorus::net::Dimension{chorus::net::DimKind::kFullyConnected, 2, 50.0, 1, 500});
    return n;
  }();
  const auto trace = chorus::workload::chakra_et::parse_et(bytes, "fuzz.0.et");
  (void)chorus::workload::import_chakra(trace, network, {});
}
CHORUS_FUZZ_TARGET(parse)
