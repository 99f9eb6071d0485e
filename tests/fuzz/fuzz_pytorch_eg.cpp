// PyTorch execution graphs (workload/pytorch_eg): JSON, node fields, tensor records and shapes,
// the operator tree, collectives, on a small two-dimensional network.
#include "fuzz_target.h"
#include "workload/pytorch_eg.h"

static void parse(const std::string& text) {
  static const chorus::net::Network network = [] {
    chorus::net::Network n;
    n.name = "fuzz";
    n.dims.push_back(chorus::net::Dimension{chorus::net::DimKind::kRing, 4, 100.0, 1, 500});
    n.dims.push_back(chorus::net::Dimension{chorus::net::DimKind::kFullyConnected, 2, 50.0, 1, 500});
    return n;
  }();
  (void)chorus::workload::import_execution_graph(text, "fuzz.json", network, {});
}
CHORUS_FUZZ_TARGET(parse)
