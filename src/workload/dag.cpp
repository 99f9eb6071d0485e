#include "workload/dag.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/error.h"

namespace chorus::workload {

std::string_view to_string(NodeKind kind) { return kind == NodeKind::kCompute ? "compute" : "comm"; }

std::string_view to_string(ComputeKind kind) {
  switch (kind) {
    case ComputeKind::kForward:
      return "forward";
    case ComputeKind::kInputGradient:
      return "input_gradient";
    case ComputeKind::kWeightGradient:
      return "weight_gradient";
    case ComputeKind::kOptimizer:
      return "optimizer";
  }
  return "?";
}

std::string_view to_string(CommGroup group) {
  switch (group) {
    case CommGroup::kDataParallel:
      return "dp";
    case CommGroup::kModelParallel:
      return "mp";
    case CommGroup::kPipeline:
      return "pp";
  }
  return "?";
}

void repeat_window(Dag& dag, const std::vector<Node>& window, int times) {
  int per_window = 1;
  for (const auto& n : window) per_window = std::max(per_window, n.iteration + 1);
  dag.iterations = times * per_window;
  std::vector<bool> has_child(window.size(), false);
  for (const auto& n : window)
    for (int d : n.deps) has_child[static_cast<size_t>(d)] = true;
  std::vector<int> sinks;
  for (std::size_t k = 0; k < window.size(); ++k)
    if (!has_child[k]) sinks.push_back(static_cast<int>(k));
  const int size = static_cast<int>(window.size());
  for (int it = 0; it < times; ++it) {
    const int base = it * size;
    for (const auto& proto : window) {
      Node n = proto;
      n.iteration = it * per_window + proto.iteration;
      for (int& d : n.deps) d += base;
      if (it > 0 && proto.deps.empty())  // a repetition starts where the previous one ended
        for (int s : sinks) n.deps.push_back(base - size + s);
      dag.add(std::move(n));
    }
  }
}

void check_same_communication(const Dag& reference, const std::string& reference_where, const Dag& other,
                              const std::string& other_where) {
  if (reference.iterations != other.iterations)
    throw InputError(other_where, fmt::format("field iterations: {}, but {} has {}", other.iterations, reference_where,
                                              reference.iterations));
  auto comms = [](const Dag& dag) {
    std::vector<const Node*> out;
    for (const auto& n : dag.nodes)
      if (n.kind == NodeKind::kComm) out.push_back(&n);
    return out;
  };
  const auto a = comms(reference), b = comms(other);
  for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    const Node &x = *a[k], &y = *b[k];
    auto differ = [&](const char* field, const std::string& mine, const std::string& theirs) {
      throw InputError(other_where, fmt::format("collective {} ('{}'): field {}: {}, but {} has {} ('{}')", k + 1,
                                                y.name, field, mine, reference_where, theirs, x.name));
    };
    // Point to point: one rank's send is its peer's recv at the same place (the pairs are matched
    // by their importer), so only the kind of node counts.
    if (x.comm != y.comm || (x.comm == CommKind::kCollective && x.op != y.op))
      differ("op", y.comm == CommKind::kPointToPoint ? "point to point" : std::string(compact_name(y.op)),
             x.comm == CommKind::kPointToPoint ? "point to point" : std::string(compact_name(x.op)));
    if (x.bytes != y.bytes) differ("bytes", fmt::format("{}", y.bytes), fmt::format("{}", x.bytes));
    if (x.dims != y.dims)
      differ("dims", fmt::format("{}", fmt::join(y.dims, ", ")), fmt::format("{}", fmt::join(x.dims, ", ")));
    if (x.group != y.group) differ("group", std::string(to_string(y.group)), std::string(to_string(x.group)));
  }
  if (a.size() != b.size())
    throw InputError(other_where, fmt::format("{} collectives, but {} has {}", b.size(), reference_where, a.size()));
}

void validate(const Dag& dag, int num_dims, const std::string& where) {
  if (dag.iterations < 1) throw InputError(where, fmt::format("iterations must be >= 1, got {}", dag.iterations));
  if (dag.stages < 1) throw InputError(where, fmt::format("pipeline stages must be >= 1, got {}", dag.stages));
  for (size_t i = 0; i < dag.nodes.size(); ++i) {
    const auto& n = dag.nodes[i];
    const std::string at = fmt::format("{}: node {} ('{}')", where, i, n.name);
    if (n.stage < 0 || n.stage >= dag.stages)
      throw InputError(at, fmt::format("stage {} is not in 0..{}", n.stage, dag.stages - 1));
    for (int d : n.deps)
      if (d < 0 || static_cast<size_t>(d) >= i)
        throw InputError(at,
                         fmt::format("dependency {} must name an earlier node (0..{})", d, static_cast<long>(i) - 1));
    auto finite_nonneg = [&](double v, const char* field) {
      if (!std::isfinite(v) || v < 0) throw InputError(at, fmt::format("{} must be finite and >= 0, got {}", field, v));
    };
    if (n.kind == NodeKind::kCompute) {
      finite_nonneg(n.flops, "flops");
      finite_nonneg(n.mem_bytes, "mem_bytes");
      if (n.duration_ns >= 0) finite_nonneg(n.duration_ns, "duration_ns");
      continue;
    }
    finite_nonneg(n.bytes, "bytes");
    if (n.comm == CommKind::kPointToPoint && n.dims.size() != 1)
      throw InputError(at, "a point-to-point transfer names exactly one dimension");
    for (size_t a = 0; a < n.dims.size(); ++a) {
      if (n.dims[a] < 0 || (num_dims >= 0 && n.dims[a] >= num_dims))
        throw InputError(at, fmt::format("dimension {} is not in 0..{}", n.dims[a], num_dims - 1));
      for (size_t b = 0; b < a; ++b)
        if (n.dims[a] == n.dims[b]) throw InputError(at, fmt::format("dimension {} listed twice", n.dims[a]));
    }
  }
}

}  // namespace chorus::workload
