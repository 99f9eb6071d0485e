#include "sim/stragglers.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/error.h"
#include "core/rng.h"
#include "workload/pipeline.h"

namespace chorus::sim {

std::vector<double> draw_speeds(std::uint64_t npus, double min, double max, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<double> speeds;
  for (std::uint64_t i = 0; i < npus; ++i) speeds.push_back(rng.uniform(min, max));
  return speeds;
}

namespace {

double speed_number(const std::string& text, const std::string& field) {
  double x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(x) || !(x > 0))
    throw InputError(field, fmt::format("'{}' is not a speed (a number > 0)", text));
  return x;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (std::size_t at; (at = text.find(sep, from)) != std::string::npos; from = at + 1)
    parts.push_back(text.substr(from, at - from));
  parts.push_back(text.substr(from));
  return parts;
}

}  // namespace

std::vector<double> parse_speeds(const std::string& text, std::uint64_t npus, const std::string& field) {
  if (text.rfind("uniform:", 0) == 0) {
    const auto p = split(text, ':');
    if (p.size() != 4) throw InputError(field, fmt::format("'{}': expected uniform:MIN:MAX:SEED", text));
    const double lo = speed_number(p[1], field), hi = speed_number(p[2], field);
    if (hi < lo) throw InputError(field, fmt::format("'{}': MIN {} is above MAX {}", text, lo, hi));
    std::uint64_t seed = 0;
    const auto [end, ec] = std::from_chars(p[3].data(), p[3].data() + p[3].size(), seed);
    if (ec != std::errc() || end != p[3].data() + p[3].size())
      throw InputError(field, fmt::format("'{}': SEED '{}' is not a non-negative integer", text, p[3]));
    return draw_speeds(npus, lo, hi, seed);
  }
  std::vector<double> speeds;
  for (const auto& s : split(text, ',')) speeds.push_back(speed_number(s, field));
  if (speeds.size() != npus)
    throw InputError(field,
                     fmt::format("{} speeds for {} NPUs (one per NPU, or uniform:MIN:MAX:SEED)", speeds.size(), npus));
  return speeds;
}

std::vector<int> npu_stages(const net::Network& network, int stages) {
  std::vector<int> out(static_cast<std::size_t>(network.num_npus()), 0);
  if (stages <= 1) return out;
  const auto dims = workload::pipeline_dims(network, stages, "pipeline");
  // Walk the reflected Gray code: stage s + 1 differs from s in one coordinate (stage_link_dim),
  // which moves one step in its direction; the lower coordinates, at an end, turn around.
  std::vector<int> coord(dims.size(), 0), dir(dims.size(), 1);
  std::map<std::vector<int>, int> stage_of;
  stage_of[coord] = 0;
  for (int s = 0; s + 1 < stages; ++s) {
    const int dim = workload::stage_link_dim(network, dims, s);
    const auto k = static_cast<std::size_t>(std::find(dims.begin(), dims.end(), dim) - dims.begin());
    coord[k] += dir[k];
    for (std::size_t j = 0; j < k; ++j) dir[j] = -dir[j];
    stage_of[coord] = s + 1;
  }
  // NPU i's coordinates: dimension 1 fastest.
  for (std::size_t npu = 0; npu < out.size(); ++npu) {
    std::vector<int> c(dims.size());
    std::uint64_t rest = npu;
    for (int d = 0; d < network.num_dims(); ++d) {
      const auto size = static_cast<std::uint64_t>(network.dims[static_cast<std::size_t>(d)].size);
      const auto it = std::find(dims.begin(), dims.end(), d);
      if (it != dims.end()) c[static_cast<std::size_t>(it - dims.begin())] = static_cast<int>(rest % size);
      rest /= size;
    }
    out[npu] = stage_of.at(c);
  }
  return out;
}

std::vector<double> straggler_compute_ns(const workload::Dag& dag, const net::Network& network,
                                         std::vector<double> compute_ns, const std::vector<double>& speeds,
                                         const std::string& field) {
  if (speeds.empty()) return compute_ns;
  if (speeds.size() != network.num_npus())
    throw InputError(field, fmt::format("{} speeds for {} NPUs", speeds.size(), network.num_npus()));
  const auto stage = npu_stages(network, dag.stages);
  std::vector<double> slowest(static_cast<std::size_t>(dag.stages), 1.0);
  std::vector<char> seen(slowest.size(), 0);
  for (std::size_t npu = 0; npu < speeds.size(); ++npu) {
    auto& s = slowest[static_cast<std::size_t>(stage[npu])];
    if (!seen[static_cast<std::size_t>(stage[npu])]++ || speeds[npu] < s) s = speeds[npu];
  }
  for (std::size_t i = 0; i < dag.nodes.size(); ++i)
    if (dag.nodes[i].kind == workload::NodeKind::kCompute)
      compute_ns[i] /= slowest[static_cast<std::size_t>(dag.nodes[i].stage)];
  return compute_ns;
}

}  // namespace chorus::sim
