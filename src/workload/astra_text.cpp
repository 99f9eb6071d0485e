#include "workload/astra_text.h"

#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <sstream>

#include "core/error.h"
#include "workload/parallelism.h"

namespace chorus::workload {
namespace {

struct LayerLine {
  std::string name;
  double compute[3];       // fwd, ig, wg (cycles)
  bool has_comm[3];
  coll::CollectiveOp op[3];
  double size[3];
  double update;
};

std::string first_word(const std::string& text) {
  std::istringstream in(text);
  std::string w;
  in >> w;
  return w;
}

}  // namespace

bool looks_like_astra_text(const std::string& text) {
  const auto w = first_word(text);
  return w == "DATA" || w == "MODEL" || w.rfind("HYBRID_", 0) == 0;
}

Dag parse_astra_text(const std::string& text, const std::string& source, const net::Network& network,
                     const AstraTextOptions& options) {
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  auto next_line = [&]() -> bool {
    while (std::getline(in, line)) {
      ++line_no;
      if (line.find_first_not_of(" \t\r") != std::string::npos) return true;
    }
    return false;
  };
  auto at = [&] { return fmt::format("{}:{}", source, line_no); };
  if (!next_line()) throw InputError(source, "empty ASTRA-sim workload file");
  // Header: the parallelism and its key: value pairs.
  std::istringstream header(line);
  std::string kind;
  header >> kind;
  const bool data = kind == "DATA", model = kind == "MODEL", hybrid = kind.rfind("HYBRID_", 0) == 0;
  if (!data && !model && !hybrid)
    throw InputError(at(), fmt::format("unknown parallelism '{}'; expected DATA, MODEL or HYBRID_*", kind));
  const bool fwd_in_bckwd = kind.find("FWD_IN_BCKWD") != std::string::npos;
  // HYBRID_DLRM (and _ENHANCED, the same DAG here): ASTRA-sim's DLRM loop (docs/workloads.md).
  const bool dlrm = kind == "HYBRID_DLRM" || kind == "HYBRID_DLRM_ENHANCED";
  int mp_npus = -1, last_bottom = -1;
  auto integer = [&](const std::string& what, const std::string& value) {
    try {
      std::size_t used = 0;
      const int v = std::stoi(value, &used);
      if (used == value.size()) return v;
    } catch (const std::exception&) {
    }
    throw InputError(at(), fmt::format("{} must be an integer, got '{}'", what, value));
  };
  for (std::string key; header >> key;) {
    if (dlrm && last_bottom < 0 && key.back() != ':') {  // ASTRA-sim 1.0: "HYBRID_DLRM <last bottom layer>"
      last_bottom = integer("the last bottom-MLP layer (after HYBRID_DLRM)", key);
      continue;
    }
    std::string value;
    if (key.back() != ':' || !(header >> value)) continue;  // other keys (ep:, vpp:, ...) are read and ignored
    // A pipeline (or gradient accumulation) would change the file's meaning; chorus's pipeline
    // generator works on models (workload YAML), not on per-layer times and sizes.
    if ((key == "pp:" || key == "ga:") && integer(key.substr(0, key.size() - 1), value) > 1)
      throw InputError(at(), fmt::format("'{} {}': pipeline stages and gradient accumulation are not imported from "
                                         "ASTRA-sim text workloads; describe the model in a workload YAML file "
                                         "(parallelism: pp_stages, microbatches) instead", key, value));
    if (key == "DLRM_LAST_BOTTOM_LAYER:") {
      last_bottom = integer("DLRM_LAST_BOTTOM_LAYER", value);
      continue;
    }
    if (key == "model_parallel_NPU_group:") {
      try {
        mp_npus = std::stoi(value);
      } catch (const std::exception&) {
        throw InputError(at(), fmt::format("model_parallel_NPU_group must be an integer, got '{}'", value));
      }
      if (mp_npus < 1) throw InputError(at(), fmt::format("model_parallel_NPU_group must be >= 1, got {}", mp_npus));
    }
  }
  if (dlrm && last_bottom < 0)
    throw InputError(at(), fmt::format("{} needs the index (>= 0) of the last bottom-MLP layer after it ('{} 4', or "
                                       "'DLRM_LAST_BOTTOM_LAYER: 4')", kind, kind));
  if (hybrid && !dlrm && mp_npus < 0) throw InputError(at(), fmt::format("{} needs 'model_parallel_NPU_group: N'", kind));
  std::vector<int> all, mp, dp;
  for (int k = 0; k < network.num_dims(); ++k) all.push_back(k);
  if (data) dp = all;
  if (model) mp = all;
  if (dlrm) {  // embedding tables model-parallel over every NPU (all-to-all), MLPs data-parallel
    mp = all;
    dp = all;
  } else if (hybrid) {
    mp = model_parallel_dims(network, mp_npus);
    for (int k = static_cast<int>(mp.size()); k < network.num_dims(); ++k) dp.push_back(k);
  }
  if (!next_line()) throw InputError(source, "missing the number of layers (line 2)");
  int num_layers = 0;
  {
    std::istringstream n(line);
    if (!(n >> num_layers) || num_layers < 1)
      throw InputError(at(), fmt::format("expected the number of layers (>= 1), got '{}'", line));
  }
  std::vector<LayerLine> layers;
  static const char* kFields[] = {"name", "reserved", "fwd_compute", "fwd_type", "fwd_size", "ig_compute",
                                  "ig_type", "ig_size", "wg_compute", "wg_type", "wg_size", "update_time"};
  for (int i = 0; i < num_layers; ++i) {
    if (!next_line())
      throw InputError(source, fmt::format("the header announces {} layers but the file has {}", num_layers, i));
    std::istringstream ls(line);
    std::vector<std::string> f;
    for (std::string w; ls >> w;) f.push_back(w);
    if (f.size() != 12)
      throw InputError(at(), fmt::format("layer '{}' has {} fields; expected 12 ({})", f.empty() ? "" : f[0], f.size(),
                                         fmt::join(kFields, " ")));
    auto number = [&](size_t k) {
      double v = 0;
      try {
        size_t used = 0;
        v = std::stod(f[k], &used);
        if (used != f[k].size()) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        throw InputError(at(), fmt::format("layer '{}': field {} ({}) must be a number, got '{}'", f[0], k + 1,
                                           kFields[k], f[k]));
      }
      if (!std::isfinite(v) || v < 0)
        throw InputError(at(), fmt::format("layer '{}': field {} ({}) must be >= 0, got {}", f[0], k + 1, kFields[k], v));
      return v;
    };
    LayerLine l;
    l.name = f[0];
    for (int p = 0; p < 3; ++p) {
      l.compute[p] = number(2 + 3 * static_cast<size_t>(p));
      const auto& type = f[3 + 3 * static_cast<size_t>(p)];
      l.has_comm[p] = type != "NONE";
      l.op[p] = coll::CollectiveOp::kAllReduce;
      if (l.has_comm[p] && !coll::parse_collective_op(type, l.op[p]))
        throw InputError(at(), fmt::format("layer '{}': field {} ({}): unknown collective '{}'; use ALLREDUCE, "
                                           "ALLGATHER, REDUCESCATTER, ALLTOALL or NONE",
                                           f[0], 4 + 3 * p, kFields[3 + 3 * p], type));
      l.size[p] = number(4 + 3 * static_cast<size_t>(p));
    }
    l.update = number(11);
    layers.push_back(l);
  }
  if (next_line()) throw InputError(at(), fmt::format("extra line after the {} announced layers", num_layers));
  if (dlrm) {
    if (last_bottom >= num_layers - 1)
      throw InputError(source + ":1", fmt::format("the last bottom-MLP layer is {}, but layers 0..{} leave no top layer after it",
                                                 last_bottom, num_layers - 1));
    // ASTRA-sim's DLRM loop issues only layer 0's all-to-alls in forward and input gradient;
    // anything else there would be dropped, so it is refused.
    for (std::size_t l = 0; l < layers.size(); ++l)
      for (int p = 0; p < 2; ++p) {
        const auto& L = layers[l];
        if (!L.has_comm[p]) continue;
        if (L.op[p] != coll::CollectiveOp::kAllToAll)
          throw InputError(source, fmt::format("{}: layer '{}': {} communication {} in a {} file; its loop issues only "
                                               "ALLTOALL there", kind, L.name, p == 0 ? "forward" : "input-gradient",
                                               coll::to_string(L.op[p]), kind));
        if (l != 0)
          throw InputError(source, p == 0 ? fmt::format("{}: layer '{}' (not the first): ASTRA-sim's DLRM loop waits only for "
                                                        "layer 0's all-to-all", kind, L.name)
                                          : fmt::format("{}: layer '{}' (not the first): ASTRA-sim's DLRM loop issues only "
                                                        "layer 0's input-gradient all-to-all", kind, L.name));
      }
  }

  Dag dag;
  dag.name = std::filesystem::path(source).stem().string();
  dag.iterations = options.iterations;
  auto compute = [&](std::string name, ComputeKind ck, double cycles, int layer, int it, std::vector<int> deps) {
    Node n;
    n.name = std::move(name);
    n.kind = NodeKind::kCompute;
    n.compute = ck;
    n.duration_ns = cycles * options.ns_per_cycle;
    n.layer = layer;
    n.iteration = it;
    std::erase(deps, -1);
    n.deps = std::move(deps);
    return dag.add(std::move(n));
  };
  auto comm = [&](std::string name, coll::CollectiveOp op, double bytes, const std::vector<int>& dims, CommGroup group,
                  int layer, int it, std::vector<int> deps) {
    Node n;
    n.name = std::move(name);
    n.kind = NodeKind::kComm;
    n.op = op;
    double group_npus = 1;
    for (int d : dims) group_npus *= network.dims[static_cast<size_t>(d)].size;
    // ASTRA-sim sizes an all-gather by each NPU's piece; chorus by the gathered result.
    n.bytes = op == coll::CollectiveOp::kAllGather ? bytes * group_npus : bytes;
    n.dims = dims;
    n.group = group;
    n.layer = layer;
    n.iteration = it;
    std::erase(deps, -1);
    n.deps = std::move(deps);
    return dag.add(std::move(n));
  };
  // Activation / input-gradient traffic belongs to the model-parallel group (all dimensions
  // for DATA files, whose fwd/ig types are normally NONE); weight gradients to the
  // data-parallel group (all dimensions for MODEL files).
  const auto& act_dims = data ? all : mp;
  const auto act_group = data ? CommGroup::kDataParallel : CommGroup::kModelParallel;
  const auto& wg_dims = model ? all : dp;
  const auto wg_group = model ? CommGroup::kModelParallel : CommGroup::kDataParallel;
  std::vector<int> ready(layers.size(), -1);
  const int n = static_cast<int>(layers.size());
  for (int it = 0; it < options.iterations; ++it) {
    auto fwd = [&](int l, int prev, const char* tag) {
      const auto& L = layers[static_cast<size_t>(l)];
      int out = compute(fmt::format("{} {} it{}", tag, L.name, it), ComputeKind::kForward, L.compute[0], l, it,
                        {prev, ready[static_cast<size_t>(l)]});
      if (L.has_comm[0] && !act_dims.empty())
        out = comm(fmt::format("{}-comm {} it{}", tag, L.name, it), L.op[0], L.size[0], act_dims, act_group, l, it, {out});
      return out;
    };
    // DLRM: the embedding's forward all-to-all does not hold up the bottom MLP; the first top
    // layer waits for it. In back-propagation the embedding's input-gradient all-to-all starts
    // after the first top layer's input gradient and the top layers' weight-gradient
    // all-reduces, and the bottom layers wait for it; the embedding has no input gradient.
    int prev = -1, fwd_a2a = -1;
    for (int l = 0; l < n; ++l) {
      const auto& L = layers[static_cast<size_t>(l)];
      if (!dlrm) {
        prev = fwd(l, prev, "fwd");
        continue;
      }
      prev = compute(fmt::format("fwd {} it{}", L.name, it), ComputeKind::kForward, L.compute[0], l, it,
                     {prev, ready[static_cast<size_t>(l)], l == last_bottom + 1 ? fwd_a2a : -1});
      if (L.has_comm[0])  // layer 0 only (checked above)
        fwd_a2a = comm(fmt::format("fwd-comm {} it{}", L.name, it), L.op[0], L.size[0], act_dims, act_group, l, it, {prev});
    }
    int grad = prev;
    std::vector<int> top_wg_comms;  // weight-gradient all-reduces of the layers above the first top layer
    for (int l = n - 1; l >= 0; --l) {
      const auto& L = layers[static_cast<size_t>(l)];
      if (fwd_in_bckwd) grad = fwd(l, grad, "recompute");
      int wg = compute(fmt::format("wg {} it{}", L.name, it), ComputeKind::kWeightGradient, L.compute[2], l, it, {grad});
      if (L.has_comm[2] && !wg_dims.empty()) {
        wg = comm(fmt::format("wg-comm {} it{}", L.name, it), L.op[2], L.size[2], wg_dims, wg_group, l, it, {wg});
        if (dlrm && l > last_bottom + 1) top_wg_comms.push_back(wg);
      }
      ready[static_cast<size_t>(l)] =
          compute(fmt::format("update {} it{}", L.name, it), ComputeKind::kOptimizer, L.update, l, it, {wg});
      if (dlrm && l == 0) break;
      int ig = compute(fmt::format("ig {} it{}", L.name, it), ComputeKind::kInputGradient, L.compute[1], l, it, {grad});
      if (dlrm && l == last_bottom + 1 && layers[0].has_comm[1]) {
        std::vector<int> deps = top_wg_comms;
        deps.push_back(ig);
        ig = comm(fmt::format("ig-comm {} it{}", layers[0].name, it), layers[0].op[1], layers[0].size[1], act_dims, act_group, 0, it,
                  deps);
      } else if (!dlrm && L.has_comm[1] && !act_dims.empty()) {
        ig = comm(fmt::format("ig-comm {} it{}", L.name, it), L.op[1], L.size[1], act_dims, act_group, l, it, {ig});
      }
      grad = ig;
    }
  }
  validate(dag, network.num_dims(), source);
  return dag;
}

}  // namespace chorus::workload
