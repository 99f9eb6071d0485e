// Chakra execution traces: the length-delimited stream reader and the import into the DAG
// (attributes, dependencies, cycles) on a small two-dimensional network.
#include "fuzz_network.h"
#include "fuzz_target.h"
#include "workload/chakra/chakra_import.h"

static void parse(const std::string& bytes) {
  const chorus::net::Network& network = fuzz_network();
  const auto trace = chorus::workload::chakra_et::parse_et(bytes, "fuzz.0.et");
  (void)chorus::workload::import_chakra(trace, network, {});
}
CHORUS_FUZZ_TARGET(parse)
