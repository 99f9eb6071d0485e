#pragma once
// Import of ASTRA-sim's per-layer text workloads (the DATA / MODEL / MICRO / HYBRID_* files
// 1.0 ships, which 2.x's Chakra text converter reads too; also SimAI/AICB's):
//   line 1: DATA | MODEL | MICRO | HYBRID_<name> [key: value ...]   (model_parallel_NPU_group: N, ...)
//   line 2: number of layers
//   then one line per layer, 12 whitespace-separated fields (HYBRID_CUSTOMIZED: 13, the last
//   the layer's own policy):
//     name reserved fwd_compute fwd_type fwd_size ig_compute ig_type ig_size
//     wg_compute wg_type wg_size update_time
// Compute times are cycles (`ns_per_cycle` each), sizes bytes per NPU (an all-gather's size is
// the per-NPU piece, as in ASTRA-sim), types ALLREDUCE | ALLGATHER | REDUCESCATTER | ALLTOALL
// | NONE. How the fields become DAG nodes: docs/workloads.md.
#include <string>

#include "net/network.h"
#include "workload/dag.h"

namespace chorus::workload {

struct AstraTextOptions {
  int iterations = 3;
  double ns_per_cycle = 1.0;
};

// True if the text starts like an ASTRA-sim workload (first word DATA, MODEL, MICRO or HYBRID_*).
bool looks_like_astra_text(const std::string& text);

Dag parse_astra_text(const std::string& text, const std::string& source_name, const net::Network& network,
                     const AstraTextOptions& options = {});

}  // namespace chorus::workload
