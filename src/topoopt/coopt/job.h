#pragma once
// A training job on a dedicated TopoOpt cluster (Sec. 5.1): a model from the zoo, its parallelism,
// and the servers it runs on, each server one NPU of the training DAG with its GPUs' mini-batches
// and compute together ("128 servers with four A100 GPUs"). Shared by the parallelization search,
// the alternating optimization, and `chorus reproduce topoopt`.
#include <string>

#include "workload/compute_model.h"
#include "workload/model.h"
#include "workload/parallelism.h"

namespace chorus::topoopt {

struct ServerSpec {
  int gpus = 4;             // GPUs per server: the per-GPU batch of Table 2 times this
  double gpu_tflops = 156;  // A100 TF32 tensor-core peak (the models train in FP32)
  double gpu_memory_gbs = 1555;
};

struct Job {
  workload::Model model;
  workload::ParallelismConfig parallelism;  // the zoo's, iterations set
  int servers = 0;
  workload::ComputeModel compute;  // one server's
};

// The zoo model `name` on `servers` servers. For TopoOpt's Table 2 models (topoopt-candle,
// topoopt-bert, topoopt-dlrm) a server's batch is spec.gpus x the per-GPU batch; any other zoo
// model needs spec.gpus == 1. InputError naming `field` for an unknown or unsupported name, or
// fewer than 2 servers.
Job server_job(const std::string& name, int servers, const ServerSpec& spec, int iterations,
               const std::string& field = "workload");

}  // namespace chorus::topoopt
