#pragma once
// Roofline compute model (Williams et al., CACM 2009): a kernel takes
//   max(flops / peak FLOP/s, bytes moved / memory bandwidth).
// Default: NVIDIA A100 FP16 tensor-core peak, the accelerator Themis assumes (Sec. 5.1,
// ref. [13]): 312 TFLOP/s dense FP16 and 1555 GB/s HBM2 (A100 40 GB datasheet).
#include "workload/dag.h"

namespace chorus::workload {

struct ComputeModel {
  double peak_tflops = 312.0;          // dense FP16 tensor-core peak, TFLOP/s
  double memory_bandwidth_gbs = 1555;  // GB/s (10^9 bytes/s)

  static ComputeModel a100_fp16() { return {}; }
  // The accelerator `rate` times as fast: both roofs (peak FLOP/s and memory bandwidth) times
  // `rate`, so every roofline time is divided by it (sensitivity studies; `rate` > 0).
  ComputeModel scaled(double rate) const { return {peak_tflops * rate, memory_bandwidth_gbs * rate}; }

  double time_ns(double flops, double mem_bytes) const;
  // A node's duration: its fixed duration if it has one, else the roofline time; 0 for comm.
  double node_time_ns(const Node& node) const;
};

}  // namespace chorus::workload
