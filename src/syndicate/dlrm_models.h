#pragma once
// The workloads of SYNDICATE's evaluation (Sec. 6.2, Table 2), built as the DLRM training
// iteration Sec. 6.5 / Fig. 13 describes, per GPU of a hybrid-parallel job (docs/syndicate.md,
// "Workloads", gives every number and choice):
//   a2a-data-prep  the next batch's sparse features (indices) to the table owners; depends only
//                  on the previous iteration's data-prep, so it may run an iteration early
//   fwd-emb        embedding lookups of the local tables for the global batch (memory bound)
//   a2a-emb-fwd    pooled embeddings to the GPUs that own the samples
//   bottom MLP     forward, beside the all-to-alls; interaction; top MLP forward and backward
//   ar-top-mlp     the top MLP's gradients, all-reduced (one bucket)
//   a2a-emb-bwd    embedding gradients back to the table owners; bwd-emb updates the tables
//   bottom MLP     backward; ar-bottom-mlp
// A4 is FSDP (ZeRO-3): each MLP layer's parameters all-gathered before its forward and again
// before its backward, its gradients reduce-scattered after the backward, instead of the
// all-reduces. The next iteration's layers wait for their parameters (all-reduce or RS).
#include <string>
#include <vector>

#include "workload/dag.h"

namespace chorus::syndicate {

struct DlrmSpec {
  std::string name;
  int batch = 512;   // per GPU
  int tables = 200;  // embedding tables (all GPUs together)
  int dim = 68;      // average embedding dimension
  int pooling = 27;  // average lookups per table and sample
  int mlp_layers = 26;
  int mlp_width = 914;            // average MLP layer width ("Avg MLP size")
  double mflops_per_sample = 89;  // forward MLP work per sample (Table 2)
  bool fsdp = false;
};

// A1-A4 of Table 2 ("~100s" tables read as 200, "~1000s" as 1000).
const std::vector<DlrmSpec>& syndicate_models();

// The widths of the bottom MLP's layers (the first mlp_layers / 3) and the top MLP's, square
// layers of 2 w^2 forward FLOP per sample, such that the layers' average width is mlp_width and
// their work mflops_per_sample: the wider root is the bottom MLP's (Sec. 6.6: bottom MLP
// all-reduces of 100s of MB, top MLP ones of MBs). Throws InputError if Table 2's two numbers
// admit no such pair.
struct MlpWidths {
  int bottom_layers = 0;
  double bottom = 0, top = 0;
};
MlpWidths mlp_widths(const DlrmSpec& spec);

// The DAG of `spec` for a job of `gpus` GPUs (all comm-ops over every dimension), unrolled.
workload::Dag dlrm_workload(const DlrmSpec& spec, int gpus, int num_dims, int iterations);

// `moe-tiny`: a mixture-of-experts iteration a 2-core host runs on 4 ranks in milliseconds:
// dense layer, expert layer (all-to-all dispatch / combine of 1 MiB per rank), dense layer;
// gradients all-reduced per layer (1, 1 and 2 MB); 1 ms of compute per layer forward on the
// `host` topology's compute model.
workload::Dag moe_tiny_workload(int num_dims, int iterations);

}  // namespace chorus::syndicate
