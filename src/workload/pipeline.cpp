#include "workload/pipeline.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"

namespace chorus::workload {

std::string_view to_string(PipelineSchedule schedule) {
  return schedule == PipelineSchedule::kGPipe ? "gpipe" : "1f1b";
}

PipelineSchedule parse_pipeline_schedule(const std::string& text, const std::string& field) {
  if (text == "1f1b") return PipelineSchedule::kOneFOneB;
  if (text == "gpipe") return PipelineSchedule::kGPipe;
  throw InputError(field, fmt::format("unknown pipeline schedule '{}' (1f1b or gpipe)", text));
}

std::vector<PipelineOp> pipeline_ops(PipelineSchedule schedule, int stages, int stage, int microbatches) {
  std::vector<PipelineOp> ops;
  ops.reserve(2 * static_cast<size_t>(microbatches));
  const int warmup = schedule == PipelineSchedule::kGPipe ? microbatches : std::min(stages - stage - 1, microbatches);
  int f = 0, b = 0;
  for (; f < warmup; ++f) ops.push_back({true, f});
  while (f < microbatches) {  // steady state: one forward, one backward
    ops.push_back({true, f++});
    ops.push_back({false, b++});
  }
  while (b < microbatches) ops.push_back({false, b++});
  return ops;
}

std::vector<int> partition_layers(const std::vector<double>& cost, int stages) {
  const int n = static_cast<int>(cost.size());
  if (stages < 1 || stages > n)
    throw InputError("pipeline", fmt::format("{} stages need at least as many layers; the model has {}", stages, n));
  std::vector<double> prefix(static_cast<size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i)
    prefix[static_cast<size_t>(i) + 1] = prefix[static_cast<size_t>(i)] + cost[static_cast<size_t>(i)];
  auto sum = [&](int a, int b) { return prefix[static_cast<size_t>(b)] - prefix[static_cast<size_t>(a)]; };
  // best[k][i]: the smallest largest group when the first i layers form k groups.
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> best(static_cast<size_t>(stages) + 1,
                                        std::vector<double>(static_cast<size_t>(n) + 1, inf));
  best[0][0] = 0;
  for (int k = 1; k <= stages; ++k)
    for (int i = k; i <= n; ++i)
      for (int j = k - 1; j < i; ++j)
        best[static_cast<size_t>(k)][static_cast<size_t>(i)] =
            std::min(best[static_cast<size_t>(k)][static_cast<size_t>(i)],
                     std::max(best[static_cast<size_t>(k) - 1][static_cast<size_t>(j)], sum(j, i)));
  const double bound = best[static_cast<size_t>(stages)][static_cast<size_t>(n)];
  std::vector<int> first{0};
  int i = 0;
  for (int k = 0; k + 1 < stages; ++k) {
    int j = i + 1;  // every stage holds a layer; each layer alone is within the bound
    while (j < n - (stages - k - 1) && sum(i, j + 1) <= bound) ++j;
    first.push_back(j);
    i = j;
  }
  first.push_back(n);
  return first;
}

std::vector<int> pipeline_dims(const net::Network& network, int stages, const std::string& field) {
  std::vector<int> dims;
  long long product = 1;
  for (int k = network.num_dims() - 1; k >= 0 && product < stages; --k) {
    product *= network.dims[static_cast<size_t>(k)].size;
    dims.insert(dims.begin(), k);
  }
  if (product != stages) {
    std::vector<int> sizes;
    for (const auto& d : network.dims) sizes.push_back(d.size);
    throw InputError(
        field, fmt::format("{} pipeline stages must be the NPUs of the network's last dimensions "
                           "(dimension sizes {}: e.g. {}{})",
                           stages, fmt::join(sizes, " x "), sizes.back(),
                           sizes.size() > 1 ? fmt::format(" or {}", sizes.back() * sizes[sizes.size() - 2]) : ""));
  }
  return dims;
}

int stage_link_dim(const net::Network& network, const std::vector<int>& dims, int s) {
  // In the reflected Gray code, stages s and s + 1 differ in the digit that ordinary counting
  // increments without a carry: the lowest digit of s that is not at its largest value.
  for (int k : dims) {
    const int size = network.dims[static_cast<size_t>(k)].size;
    if (s % size != size - 1) return k;
    s /= size;
  }
  throw InputError("pipeline", fmt::format("no stage follows the last stage ({})", s));
}

}  // namespace chorus::workload
