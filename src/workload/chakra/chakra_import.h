#pragma once
// Import of Chakra execution traces (the per-rank `.et` files ASTRA-sim 2.x runs) into the
// training DAG. The inverse, export: chakra_export.h. What maps to what: docs/workloads.md, "Chakra traces".
#include <string>

#include "net/network.h"
#include "workload/chakra/et_stream.h"
#include "workload/dag.h"

namespace chorus::workload {

struct ChakraOptions {
  int iterations = 1;  // the trace is one iteration; more repeat it, each after the previous one
  int rank = -1;       // whose file; -1: the number in the file name (`name.<rank>.et`), else 0
  // Collectives chorus does not simulate (BROADCAST, REDUCE, ...) become nodes that finish at
  // once instead of errors.
  bool skip_unsupported = false;
  // Follow ctrl_deps as dependencies too. Off by default: Chakra's feeder (ASTRA-sim 2.x)
  // follows data_deps only, and PyTorch-converted traces use ctrl_deps for the host call tree.
  bool ctrl_deps = false;
};

// The `.et` file `--workload` names, or "" if it is not a Chakra trace: a path ending in `.et`,
// or a prefix `P` for which `P.<rank>.et` exists (rank: options.rank, or 0).
std::string chakra_trace_file(const std::string& path_or_prefix, int rank);

// The DAG of one rank's parsed trace. Errors (InputError) name the file, the node id and the
// field: missing or mistyped attributes, unsupported collectives, unknown dependency ids,
// duplicate ids, dependency cycles, peers outside the network. `notes`, if given, receives
// what was skipped or ignored ("" if nothing).
Dag import_chakra(const chakra_et::EtTrace& trace, const net::Network& network, const ChakraOptions& options,
                  std::string* notes = nullptr);

// chakra_trace_file + read_et_file + import_chakra.
Dag load_chakra(const std::string& path_or_prefix, const net::Network& network, const ChakraOptions& options);

}  // namespace chorus::workload
