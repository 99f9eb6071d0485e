#include "topoopt/coopt/job.h"

#include <fmt/format.h>

#include "core/error.h"
#include "workload/zoo.h"

namespace chorus::topoopt {

Job server_job(const std::string& name, int servers, const ServerSpec& spec, int iterations, const std::string& field) {
  if (servers < 2) throw InputError("servers", fmt::format("a fabric needs at least 2 servers, got {}", servers));
  if (spec.gpus < 1) throw InputError("gpus", fmt::format("must be >= 1, got {}", spec.gpus));
  auto entry = workload::zoo_model(name, field);
  const int batch = entry.model.batch_per_npu * spec.gpus;
  if (name == "topoopt-candle")
    entry.model = workload::candle_uno(batch);
  else if (name == "topoopt-bert")
    entry.model = workload::bert_topoopt(batch);
  else if (name == "topoopt-dlrm")
    entry.model = workload::dlrm_topoopt(batch);
  else if (spec.gpus != 1)
    throw InputError(
        field, fmt::format("'{}' is not a TopoOpt Table 2 model (topoopt-candle, topoopt-bert, topoopt-dlrm)", name));
  Job job;
  job.model = std::move(entry.model);
  job.parallelism = entry.parallelism;
  job.parallelism.iterations = iterations;
  job.servers = servers;
  job.compute.peak_tflops = spec.gpu_tflops * spec.gpus;
  job.compute.memory_bandwidth_gbs = spec.gpu_memory_gbs * spec.gpus;
  return job;
}

}  // namespace chorus::topoopt
