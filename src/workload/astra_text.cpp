#include "workload/astra_text.h"

#include <algorithm>
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
  double compute[3];  // fwd, ig, wg (cycles)
  bool has_comm[3];
  CollectiveKind op[3];
  double size[3];
  double update;
  std::vector<int> dims[3];  // the network dimensions each phase's collective spans (empty: not issued)
  CommGroup group[3];
};

// Which dimensions carry each phase's collective (fwd, ig, wg) under one of ASTRA-sim 1.0's
// parallelism policies (its Workload::decode_involved_dimensions). `mp_npus` > 0: the
// model-parallel group of HYBRID_TRANSFORMER* (chorus: the first dimensions up to that many
// NPUs; 1.0 splits the dimension the group ends inside, chorus does not split dimensions).
struct PhaseDims {
  std::vector<int> dims[3];
  CommGroup group[3] = {CommGroup::kModelParallel, CommGroup::kModelParallel, CommGroup::kDataParallel};
};

bool known_policy(const std::string& p) {
  return p == "DATA" || p == "MODEL" || p == "MICRO" || p == "HYBRID_DATA_MODEL" || p == "HYBRID_MODEL_DATA" ||
         p == "HYBRID_DLRM" || p == "HYBRID_DLRM_ENHANCED" || p == "HYBRID_TRANSFORMER" ||
         p == "HYBRID_TRANSFORMER_FWD_IN_BCKWD";
}

PhaseDims phase_dims(const std::string& policy, int mp_npus, const net::Network& network) {
  PhaseDims out;
  std::vector<int> all;
  for (int k = 0; k < network.num_dims(); ++k) all.push_back(k);
  auto split = [&](std::vector<int> model) {  // model-parallel dims for fwd / ig, the rest for wg
    std::vector<int> data;
    for (int k : all)
      if (std::find(model.begin(), model.end(), k) == model.end()) data.push_back(k);
    out.dims[0] = out.dims[1] = std::move(model);
    out.dims[2] = std::move(data);
  };
  if (policy == "MODEL") {  // everything model-parallel
    out.dims[0] = out.dims[1] = out.dims[2] = all;
    out.group[2] = CommGroup::kModelParallel;
  } else if (mp_npus > 0) {  // model_parallel_NPU_group: N, whatever the HYBRID_* name
    split(model_parallel_dims(network, mp_npus));
  } else if (policy == "HYBRID_DATA_MODEL") {  // 1.0: model parallel on the first dimension, data on the others
    split(network.num_dims() > 0 ? std::vector<int>{0} : std::vector<int>{});
  } else if (policy == "HYBRID_MODEL_DATA") {  // 1.0: data parallel on the first dimension, model on the others
    std::vector<int> model(all.begin() + (all.empty() ? 0 : 1), all.end());
    split(model);
  } else {  // DATA, MICRO, HYBRID_DLRM*: weight gradients over every dimension, no fwd / ig traffic
    out.dims[2] = all;
  }
  return out;
}

std::string first_word(const std::string& text) {
  std::istringstream in(text);
  std::string w;
  in >> w;
  return w;
}

}  // namespace

bool looks_like_astra_text(const std::string& text) {
  const auto w = first_word(text);
  return w == "DATA" || w == "MODEL" || w == "MICRO" || w.rfind("HYBRID_", 0) == 0;
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
  const bool data = kind == "DATA", model = kind == "MODEL", micro = kind == "MICRO",
             hybrid = kind.rfind("HYBRID_", 0) == 0;
  if (!data && !model && !micro && !hybrid)
    throw InputError(at(), fmt::format("unknown parallelism '{}'; expected DATA, MODEL, MICRO or HYBRID_*", kind));
  const bool fwd_in_bckwd = kind.find("FWD_IN_BCKWD") != std::string::npos;
  // HYBRID_DLRM (and _ENHANCED, the same DAG here): ASTRA-sim's DLRM loop (docs/workloads.md).
  const bool dlrm = kind == "HYBRID_DLRM" || kind == "HYBRID_DLRM_ENHANCED";
  // HYBRID_CUSTOMIZED: each layer names its own policy in a 13th field.
  const bool customized = kind == "HYBRID_CUSTOMIZED";
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
                                         "(parallelism: pp_stages, microbatches) instead",
                                         key, value));
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
                                       "'DLRM_LAST_BOTTOM_LAYER: 4')",
                                       kind, kind));
  // ASTRA-sim 1.0 decides the dimensions of HYBRID_DATA_MODEL, HYBRID_MODEL_DATA and
  // HYBRID_CUSTOMIZED by fixed rules; the transformer policies (and hybrids 1.0 does not know,
  // such as SimAI's) need the group.
  if (hybrid && !dlrm && !customized && mp_npus < 0 && kind != "HYBRID_DATA_MODEL" && kind != "HYBRID_MODEL_DATA")
    throw InputError(at(), fmt::format("{} needs 'model_parallel_NPU_group: N' (ASTRA-sim 1.0 chooses the dimensions "
                                       "itself only for HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_CUSTOMIZED and "
                                       "HYBRID_DLRM)",
                                       kind));
  std::vector<int> all;
  for (int k = 0; k < network.num_dims(); ++k) all.push_back(k);
  PhaseDims file_dims;
  if (data) {  // every collective a layer names, data-parallel over all dimensions
    for (auto& d : file_dims.dims) d = all;
    file_dims.group[0] = file_dims.group[1] = CommGroup::kDataParallel;
  } else if (dlrm) {  // embedding tables model-parallel over every NPU (all-to-all), MLPs data-parallel
    for (auto& d : file_dims.dims) d = all;
  } else if (!customized) {
    file_dims = phase_dims(kind, mp_npus, network);
  }
  if (!next_line()) throw InputError(source, "missing the number of layers (line 2)");
  int num_layers = 0;
  {
    std::istringstream n(line);
    if (!(n >> num_layers) || num_layers < 1)
      throw InputError(at(), fmt::format("expected the number of layers (>= 1), got '{}'", line));
  }
  std::vector<LayerLine> layers;
  static const char* kFields[] = {"name",    "reserved", "fwd_compute", "fwd_type", "fwd_size", "ig_compute",
                                  "ig_type", "ig_size",  "wg_compute",  "wg_type",  "wg_size",  "update_time"};
  for (int i = 0; i < num_layers; ++i) {
    if (!next_line())
      throw InputError(fmt::format("{}:{}", source, line_no + 1),
                       fmt::format("end of file: the number of layers (line 2) announces {} but the file has {} (a "
                                   "truncated file?)",
                                   num_layers, i));
    std::istringstream ls(line);
    std::vector<std::string> f;
    for (std::string w; ls >> w;) f.push_back(w);
    const std::size_t expected = customized ? 13 : 12;
    if (f.size() != expected)
      throw InputError(at(), fmt::format("layer '{}' has {} fields; expected {} ({}{})", f.empty() ? "" : f[0],
                                         f.size(), expected, fmt::join(kFields, " "), customized ? " policy" : ""));
    auto number = [&](size_t k) {
      double v = 0;
      try {
        size_t used = 0;
        v = std::stod(f[k], &used);
        if (used != f[k].size()) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        throw InputError(
            at(), fmt::format("layer '{}': field {} ({}) must be a number, got '{}'", f[0], k + 1, kFields[k], f[k]));
      }
      if (!std::isfinite(v) || v < 0)
        throw InputError(at(),
                         fmt::format("layer '{}': field {} ({}) must be >= 0, got {}", f[0], k + 1, kFields[k], v));
      return v;
    };
    LayerLine l;
    l.name = f[0];
    for (int p = 0; p < 3; ++p) {
      l.compute[p] = number(2 + 3 * static_cast<size_t>(p));
      const auto& type = f[3 + 3 * static_cast<size_t>(p)];
      l.has_comm[p] = type != "NONE";
      l.op[p] = CollectiveKind::kAllReduce;
      if (l.has_comm[p] && !coll::parse_collective_op(type, l.op[p]))
        throw InputError(at(), fmt::format("layer '{}': field {} ({}): unknown collective '{}'; use ALLREDUCE, "
                                           "ALLGATHER, REDUCESCATTER, ALLTOALL or NONE",
                                           f[0], 4 + 3 * p, kFields[3 + 3 * p], type));
      l.size[p] = number(4 + 3 * static_cast<size_t>(p));
    }
    l.update = number(11);
    PhaseDims pd = file_dims;
    if (customized) {
      const auto& policy = f[12];
      if (!known_policy(policy))
        throw InputError(at(), fmt::format("layer '{}': field 13 (policy): unknown parallelism '{}'; use DATA, MODEL, "
                                           "HYBRID_DATA_MODEL, HYBRID_MODEL_DATA or HYBRID_TRANSFORMER",
                                           f[0], policy));
      if (policy.rfind("HYBRID_TRANSFORMER", 0) == 0 && mp_npus < 0)
        throw InputError(at(), fmt::format("layer '{}': field 13 (policy): {} needs 'model_parallel_NPU_group: N' "
                                           "on the header line",
                                           f[0], policy));
      pd = phase_dims(policy, policy.rfind("HYBRID_TRANSFORMER", 0) == 0 ? mp_npus : -1, network);
    }
    for (int p = 0; p < 3; ++p) {
      l.dims[p] = pd.dims[p];
      l.group[p] = pd.group[p];
    }
    layers.push_back(l);
  }
  if (next_line()) throw InputError(at(), fmt::format("extra line after the {} announced layers", num_layers));
  if (dlrm) {
    if (last_bottom >= num_layers - 1)
      throw InputError(source + ":1",
                       fmt::format("the last bottom-MLP layer is {}, but layers 0..{} leave no top layer after it",
                                   last_bottom, num_layers - 1));
    // ASTRA-sim's DLRM loop issues only layer 0's all-to-alls in forward and input gradient;
    // anything else there would be dropped, so it is refused.
    for (std::size_t l = 0; l < layers.size(); ++l)
      for (int p = 0; p < 2; ++p) {
        const auto& L = layers[l];
        if (!L.has_comm[p]) continue;
        if (L.op[p] != CollectiveKind::kAllToAll)
          throw InputError(
              source, fmt::format("{}: layer '{}': {} communication {} in a {} file; its loop issues only "
                                  "ALLTOALL there",
                                  kind, L.name, p == 0 ? "forward" : "input-gradient", compact_name(L.op[p]), kind));
        if (l != 0)
          throw InputError(source,
                           p == 0 ? fmt::format("{}: layer '{}' (not the first): ASTRA-sim's DLRM loop waits only for "
                                                "layer 0's all-to-all",
                                                kind, L.name)
                                  : fmt::format("{}: layer '{}' (not the first): ASTRA-sim's DLRM loop issues only "
                                                "layer 0's input-gradient all-to-all",
                                                kind, L.name));
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
  auto comm = [&](std::string name, CollectiveKind op, double bytes, const std::vector<int>& dims, CommGroup group,
                  int layer, int it, std::vector<int> deps) {
    Node n;
    n.name = std::move(name);
    n.kind = NodeKind::kComm;
    n.op = op;
    double group_npus = 1;
    for (int d : dims) group_npus *= network.dims[static_cast<size_t>(d)].size;
    // ASTRA-sim sizes an all-gather by each NPU's piece; chorus by the gathered result.
    n.bytes = op == CollectiveKind::kAllGather ? bytes * group_npus : bytes;
    n.dims = dims;
    n.group = group;
    n.layer = layer;
    n.iteration = it;
    std::erase(deps, -1);
    n.deps = std::move(deps);
    return dag.add(std::move(n));
  };
  // Each phase's collective spans the layer's dims[phase] (PhaseDims above); an empty set is
  // a collective ASTRA-sim issues over no dimension, which finishes at once: not a node.
  auto phase_comm = [&](const LayerLine& L, int p, int l, int it, const std::string& tag, std::vector<int> deps) {
    return comm(fmt::format("{} {} it{}", tag, L.name, it), L.op[p], L.size[p], L.dims[p], L.group[p], l, it,
                std::move(deps));
  };
  auto issued = [](const LayerLine& L, int p) { return L.has_comm[p] && !L.dims[p].empty(); };
  if (micro) {
    // ASTRA-sim's microbenchmark: no compute; every pass issues the weight-gradient collective
    // at once (1.0 runs the first layer's, Chakra's text converter every layer's; the files
    // ASTRA-sim ships have one layer), all in flight together.
    for (int it = 0; it < options.iterations; ++it)
      for (std::size_t l = 0; l < layers.size(); ++l)
        if (issued(layers[l], 2)) phase_comm(layers[l], 2, static_cast<int>(l), it, "micro-comm", {});
    if (dag.nodes.empty())
      throw InputError(source, "a MICRO workload runs its layers' weight-gradient collectives, and every one is NONE");
    validate(dag, network.num_dims(), source);
    return dag;
  }
  std::vector<int> ready(layers.size(), -1);
  const int n = static_cast<int>(layers.size());
  for (int it = 0; it < options.iterations; ++it) {
    auto fwd = [&](int l, int prev, const char* tag) {
      const auto& L = layers[static_cast<size_t>(l)];
      int out = compute(fmt::format("{} {} it{}", tag, L.name, it), ComputeKind::kForward, L.compute[0], l, it,
                        {prev, ready[static_cast<size_t>(l)]});
      if (issued(L, 0)) out = phase_comm(L, 0, l, it, fmt::format("{}-comm", tag), {out});
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
        fwd_a2a = phase_comm(L, 0, l, it, "fwd-comm", {prev});
    }
    int grad = prev;
    std::vector<int> top_wg_comms;  // weight-gradient all-reduces of the layers above the first top layer
    for (int l = n - 1; l >= 0; --l) {
      const auto& L = layers[static_cast<size_t>(l)];
      if (fwd_in_bckwd) grad = fwd(l, grad, "recompute");
      int wg =
          compute(fmt::format("wg {} it{}", L.name, it), ComputeKind::kWeightGradient, L.compute[2], l, it, {grad});
      if (issued(L, 2)) {
        wg = phase_comm(L, 2, l, it, "wg-comm", {wg});
        if (dlrm && l > last_bottom + 1) top_wg_comms.push_back(wg);
      }
      ready[static_cast<size_t>(l)] =
          compute(fmt::format("update {} it{}", L.name, it), ComputeKind::kOptimizer, L.update, l, it, {wg});
      if (dlrm && l == 0) break;
      int ig = compute(fmt::format("ig {} it{}", L.name, it), ComputeKind::kInputGradient, L.compute[1], l, it, {grad});
      if (dlrm && l == last_bottom + 1 && layers[0].has_comm[1]) {
        std::vector<int> deps = top_wg_comms;
        deps.push_back(ig);
        ig = phase_comm(layers[0], 1, 0, it, "ig-comm", deps);
      } else if (!dlrm && l > 0 && issued(L, 1)) {
        // The first layer's input gradient goes nowhere: ASTRA-sim 1.0's loops and Chakra's
        // text converter issue no collective for it.
        ig = phase_comm(L, 1, l, it, "ig-comm", {ig});
      }
      grad = ig;
    }
  }
  validate(dag, network.num_dims(), source);
  return dag;
}

}  // namespace chorus::workload
