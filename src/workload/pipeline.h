#pragma once
// Pipeline parallelism: the model's layers are cut into `stages` contiguous groups, one per
// pipeline stage, and each mini-batch into `microbatches`; a stage forwards a micro-batch's
// activations to the next stage and sends its input gradients back to the previous one.
//
//  - Schedules (the order a stage runs its micro-batches' forward and backward passes):
//    GPipe (Huang et al., NeurIPS 2019): every forward, then every backward;
//    1F1B, PipeDream-Flush (Narayanan et al., ICML 2021; Megatron-LM, SC 2021 Fig. 4): stage s
//    first runs min(stages - s - 1, microbatches) forwards, then alternates one forward and
//    one backward, then runs the remaining backwards. Both flush at the end of the iteration,
//    so both have the bubble (stages - 1) x (forward + backward) of one micro-batch; 1F1B holds
//    at most `stages` micro-batches' activations instead of all of them.
//  - Partition: contiguous, the largest stage's compute time as small as possible.
//  - Placement: the stages lie on the network's last dimensions (whose NPU product must be
//    `stages`), numbered in a reflected mixed-radix Gray code so that consecutive stages
//    differ in one coordinate: each stage-to-stage transfer crosses exactly one dimension.
#include <string>
#include <string_view>
#include <vector>

#include "net/network.h"

namespace chorus::workload {

enum class PipelineSchedule { kOneFOneB, kGPipe };
std::string_view to_string(PipelineSchedule schedule);  // "1f1b", "gpipe"
// "1f1b" or "gpipe"; anything else is an InputError naming `field`.
PipelineSchedule parse_pipeline_schedule(const std::string& text, const std::string& field);

struct PipelineOp {
  bool forward = true;
  int microbatch = 0;
  bool operator==(const PipelineOp&) const = default;
};

// The order stage `stage` runs one iteration's micro-batches.
std::vector<PipelineOp> pipeline_ops(PipelineSchedule schedule, int stages, int stage, int microbatches);

// First layer of each stage (size stages + 1, last entry = number of layers): contiguous
// groups of at least one layer, minimising the largest group's sum of `cost`; among the
// optimal cuts, each stage takes as many layers as it can, front first.
std::vector<int> partition_layers(const std::vector<double>& cost, int stages);

// The network's last dimensions whose NPU product is `stages` (empty for 1 stage); an
// InputError naming `field` if no suffix of dimensions has exactly that product.
std::vector<int> pipeline_dims(const net::Network& network, int stages, const std::string& field);

// The dimension a transfer between stage s and stage s + 1 crosses, for the stages placed
// on `dims` (pipeline_dims) of `network` in reflected Gray-code order.
int stage_link_dim(const net::Network& network, const std::vector<int>& dims, int s);

}  // namespace chorus::workload
