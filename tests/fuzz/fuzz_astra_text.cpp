// ASTRA-sim text workloads (DATA, MODEL, MICRO, HYBRID_*, HYBRID_CUSTOMIZED's per-layer
// policies) imported on a small two-dimensional network; what imports is also exported as a
// Chakra trace and read back (chakra_export), which may refuse it but must not crash.
#include "fuzz_network.h"
#include "fuzz_target.h"
#include "workload/astra_text.h"
#include "workload/chakra/chakra_export.h"
#include "workload/chakra/chakra_import.h"

static void parse(const std::string& text) {
  const chorus::net::Network& network = fuzz_network();
  chorus::workload::AstraTextOptions options;
  options.iterations = 2;
  options.ns_per_cycle = 1000;  // whole microseconds, so that the export usually succeeds
  const auto dag = chorus::workload::parse_astra_text(text, "fuzz.txt", network, options);
  const auto bytes = chorus::workload::export_chakra(dag, network);
  (void)chorus::workload::import_chakra(chorus::workload::chakra_et::parse_et(bytes, "fuzz.0.et"), network, {});
}
CHORUS_FUZZ_TARGET(parse)
