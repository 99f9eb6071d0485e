#pragma once
// Import of PyTorch execution graphs (torch.profiler.ExecutionGraphObserver: one JSON per rank,
// `schema`, `nodes` with id, parent, name, inputs / outputs with their shapes and types), the
// graphs Chakra's PyTorch converter starts from. Independent of how the graph was recorded.
// The operators under a thread's root become compute nodes (FLOPs of their matmul and
// convolution family, else the bytes of their tensors at the memory bandwidth), the
// process-group backends' collective records (`gloo:all_reduce`, `nccl:all_to_all`, ...)
// communication nodes, and dependencies come from the data flow (tensor storages).
// What maps to what: docs/workloads.md, "PyTorch execution graphs".
#include <string>

#include "net/network.h"
#include "workload/dag.h"

namespace chorus::workload {

struct ExecutionGraphOptions {
  int iterations = 1;  // the graph is one recorded window; more repeat it, each after the previous one
};

// True if `text` is a JSON object with `schema` and `nodes` (cheap check of its start and keys).
bool looks_like_execution_graph(const std::string& text);

// Throws InputError naming `source`, the node id and the field for malformed graphs: not JSON
// (with the byte offset), missing or mistyped fields, tensors whose records or shapes do not
// match, collectives chorus does not simulate.
Dag import_execution_graph(const std::string& text, const std::string& source, const net::Network& network,
                           const ExecutionGraphOptions& options = {});

}  // namespace chorus::workload
