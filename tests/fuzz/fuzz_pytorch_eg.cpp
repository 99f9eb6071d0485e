// PyTorch execution graphs (workload/pytorch_eg): JSON, node fields, tensor records and shapes,
// the operator tree, collectives, on a small two-dimensional network.
#include "fuzz_network.h"
#include "fuzz_target.h"
#include "workload/pytorch_eg.h"

static void parse(const std::string& text) {
  const chorus::net::Network& network = fuzz_network();
  (void)chorus::workload::import_execution_graph(text, "fuzz.json", network, {});
}
CHORUS_FUZZ_TARGET(parse)
