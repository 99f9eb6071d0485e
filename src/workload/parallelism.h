#pragma once
// Parallelism strategies that turn a Model into a training DAG for one NPU, over several
// iterations (Themis Sec. 5.2):
//  - data parallel: every layer's weight gradient is all-reduced over the data-parallel
//    dimensions as back-propagation produces it, in buckets of `bucket_bytes` (0: one
//    all-reduce per layer, as ASTRA-sim's layer-wise workloads issue them);
//  - model parallel over the first dimensions up to `mp_npus` NPUs: layers are split
//    (tensor-parallel) across that group, with activation / input-gradient all-reduces;
//    data parallel over the remaining dimensions;
//  - ZeRO stage 2 (Rajbhandari et al. 2020): gradients are reduce-scattered over the
//    data-parallel group, each NPU updates its shard, parameters are all-gathered before
//    the layer's next forward; with `recompute` the backward pass first re-runs each
//    layer's forward (activation checkpointing), counted as forward as Themis Fig. 12 does;
//  - hybrid DLRM (Model::embeddings): tables model-parallel over all NPUs with all-to-all,
//    MLPs data-parallel;
//  - mixture of experts (Layer::expert): all-to-all dispatch / combine over the
//    expert-parallel group (the first dimensions up to `ep_npus`), expert gradients
//    all-reduced over the remaining dimensions, dense gradients over all of them;
//  - pipeline parallel (workload/pipeline.h) over the last dimensions, `pp_stages` of them
//    by NPU count, each mini-batch in `microbatches`: a stage runs its layers' share of every
//    micro-batch in the schedule's order (1F1B or GPipe), sends activations forward and input
//    gradients back point to point, and synchronizes its layers' gradients over the
//    data-parallel dimensions (those between the model- and pipeline-parallel ones) after the
//    last micro-batch's backward. The stages' layers are balanced by their roofline time. Combines with model parallel, ZeRO-2 and recompute; not with
//    embeddings, experts or per-layer choices. One stage with several micro-batches is
//    gradient accumulation.
#include "net/network.h"
#include "workload/compute_model.h"
#include "workload/dag.h"
#include "workload/model.h"
#include "workload/pipeline.h"

namespace chorus::workload {

// Training iterations a DAG may be unrolled to (every command and job file that builds one):
// the DAG holds every iteration's nodes, so its memory grows with them.
inline constexpr int kMaxTrainingIterations = 1000;

struct ParallelismConfig {
  int mp_npus = 1;  // model-parallel group: the first dimensions whose product <= this
  // Explicit layout (Megatron's tp / dp / pp; 0: unset). tp: the tensor-parallel group is the
  // first dimensions whose product is exactly tp (replaces mp_npus); dp: a check, the
  // data-parallel group (the dimensions between the tensor- and pipeline-parallel ones) must
  // have dp NPUs, so that tp x dp x pp_stages = the network's NPUs.
  int tp = 0;
  int dp = 0;
  int ep_npus = 1;          // expert-parallel group of MoE layers, chosen the same way
  bool zero2 = false;       // ZeRO-2 gradient / parameter traffic instead of all-reduce
  bool recompute = false;   // forward-in-backward
  double bucket_bytes = 0;  // data-parallel gradient bucket; 0 = per layer
  // false: the data-parallel gradient traffic starts only when back-propagation has ended
  // (no overlap with the backward pass), one reading of Themis Sec. 6.2.
  bool overlap_dp = true;
  int iterations = 3;    // 1..kMaxTrainingIterations
  int pp_stages = 1;     // pipeline stages
  int microbatches = 0;  // per mini-batch; 0: 4 x pp_stages (GPipe Sec. 2.2: the bubble is
                         // negligible from 4 micro-batches per stage), 1 without a pipeline
  PipelineSchedule pipeline_schedule = PipelineSchedule::kOneFOneB;
  // The accelerator the pipeline's stages are balanced for (set it to the simulation's).
  ComputeModel compute;
  // Per-layer choice (a parallelization search's, TopoOpt Sec. 3.2): empty, every layer is split
  // over the model-parallel group as above; else one entry per layer: true, the layer is split and
  // self-contained (its output partial sums are all-reduced over the group in the forward pass,
  // its input gradient in the backward pass, whatever Layer::mp_all_reduce says), so that its
  // neighbours may be replicated; false, the layer is replicated on every NPU of the group (whole
  // FLOPs and parameters, no activation traffic) and its gradient is all-reduced over all NPUs.
  // Where a split layer follows a replicated one it first all-gathers its input over the group,
  // and where a replicated one follows it, its output gradient (each NPU holds its own samples
  // there; the all-gather's bytes are the gathered size, the layer's input or output elements).
  std::vector<bool> layer_mp;
};

// The dimensions of the model-parallel group: the longest prefix dim1..dimK whose NPU
// product is <= mp_npus. The rest form the data-parallel group.
std::vector<int> model_parallel_dims(const net::Network& network, int mp_npus);

// The names errors give the layout's settings (a workload file's field at its line, a flag).
struct LayoutFields {
  std::string tp = "tp", dp = "dp", pp = "pp_stages";
};

// Which dimensions carry the tensor-, data- and pipeline-parallel (and expert all-to-all)
// traffic of `model` under `config` on `network`, as build_training_dag places them. InputError
// naming a field of `fields` when tp is no product of the first dimensions, pp_stages none of
// the last, the two overlap, dp is not the NPUs between them, or the model cannot be tensor
// parallel (embedding tables, expert layers, or no layer that all-reduces its activations).
ParallelLayout parallel_layout(const Model& model, const ParallelismConfig& config, const net::Network& network,
                               const LayoutFields& fields = {});

// "TP 128 (dims 0, 1) x DP 8 (dim 2) x PP 1", with the expert and embedding groups when there are.
std::string to_string(const ParallelLayout& layout);

// The logical network of a job on `npus` NPUs with one accelerator per server (graph fabrics,
// TopoOpt): one dimension of `npus`, or two (the model- or expert-parallel group x the rest) when
// that group is larger than 1, smaller than the job and divides it, so that the generators above
// place the group on dimension 1. Only the shape matters; bandwidths are placeholders.
net::Network logical_network(const ParallelismConfig& config, int npus);

// ParallelismConfig::microbatches with its default applied.
int effective_microbatches(const ParallelismConfig& config);
// Pipeline stages or micro-batches (gradient accumulation): the pipeline generator's DAG.
bool pipelined(const ParallelismConfig& config);

Dag build_training_dag(const Model& model, const ParallelismConfig& config, const net::Network& network);

}  // namespace chorus::workload
