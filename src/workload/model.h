#pragma once
// A DNN as the parallelism generators see it: an ordered list of layers with the work and
// sizes that decide compute time and communication volume.
#include <string>
#include <vector>

namespace chorus::workload {

struct Layer {
  std::string name;
  double forward_flops = 0;    // for the whole per-NPU mini-batch, unsplit layer
  double params = 0;           // parameters (weights + biases + norm scales)
  double input_elements = 0;   // input activation elements for the mini-batch
  double output_elements = 0;  // output activation elements for the mini-batch
  // Model parallel (tensor-parallel, Megatron style): after the forward the partial outputs
  // are all-reduced over the model-parallel group, after the input gradient the partial
  // input gradients likewise (Themis Sec. 6.2: "communicated through AR ... before
  // processing the next layer").
  bool mp_all_reduce = false;
  // Mixture-of-experts layer (expert parallel): tokens go to their expert's NPU by an
  // all-to-all before the layer and come back by another after it (and likewise in
  // back-propagation); `params` and `forward_flops` are those of the one expert an NPU holds.
  bool expert = false;
};

// Embedding tables partitioned model-parallel across all NPUs (DLRM, Themis Sec. 5.2/6.2):
// the lookups' results are exchanged by an all-to-all that overlaps the bottom MLP, and the
// layer `top_start` (the first top-MLP layer) waits for it; in back-propagation the
// embedding gradients go back by an all-to-all after that layer's input gradient, and the
// tables are updated when it arrives.
struct Embeddings {
  int tables = 0;
  int dim = 0;
  int top_start = 0;  // index of the first layer that consumes the embeddings
};

struct Model {
  std::string name;
  int batch_per_npu = 1;
  double bytes_per_element = 2;  // FP16 activations, weights and gradients (Themis Sec. 5.2)
  std::vector<Layer> layers;
  Embeddings embeddings;  // tables == 0: none

  double total_params() const;
  double total_forward_flops() const;
};

}  // namespace chorus::workload
