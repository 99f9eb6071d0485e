// SYNDICATE's evaluation workloads (dlrm_models.h, docs/syndicate.md "Workloads").
#include "syndicate/dlrm_models.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace chorus::syndicate {

const std::vector<DlrmSpec>& syndicate_models() {
  // Table 2: batch, tables, average dimension and pooling, MLP layers and average width, MFLOPS
  // per sample.
  static const std::vector<DlrmSpec> models = {
      {"syndicate-a1", 512, 200, 68, 27, 26, 914, 89, false},
      {"syndicate-a2", 1024, 1000, 93, 15, 20, 3375, 638, false},
      {"syndicate-a3", 512, 1000, 231, 17, 26, 3210, 784, false},
      {"syndicate-a4", 4096, 1000, 72, 49, 43, 682, 60, true},
  };
  return models;
}

MlpWidths mlp_widths(const DlrmSpec& s) {
  // b bottom layers of width x, t top layers of width y: b x + t y = A (the widths' sum) and
  // b x^2 + t y^2 = F (forward FLOP / 2 per sample). Eliminating y:
  //   b (b + t) x^2 - 2 A b x + (A^2 - t F) = 0,
  // whose discriminant 4 b t ((b + t) F - A^2) is not negative when F / (b + t) is at least the
  // squared mean width, as a mean of squares is.
  MlpWidths w;
  w.bottom_layers = std::max(1, s.mlp_layers / 3);
  const double b = w.bottom_layers;
  const double t = s.mlp_layers - b;
  const double A = static_cast<double>(s.mlp_layers) * s.mlp_width;
  const double F = s.mflops_per_sample * 1e6 / 2;
  const double disc = 4 * b * t * ((b + t) * F - A * A);
  w.bottom = (2 * A * b + std::sqrt(std::max(0.0, disc))) / (2 * b * (b + t));
  w.top = t > 0 ? (A - b * w.bottom) / t : 0;
  if (disc < 0 || (t > 0 && w.top <= 0))
    throw InputError(fmt::format("workload '{}'", s.name),
                     fmt::format("{} MLP layers of average width {} cannot do {} MFLOP per sample", s.mlp_layers,
                                 s.mlp_width, s.mflops_per_sample));
  return w;
}

namespace {

constexpr double kFp32 = 4;   // bytes per parameter and gradient: FP32 (the compute rate: topology.cpp)
constexpr double kIndex = 8;  // bytes per sparse index (int64)

struct Builder {
  workload::Dag dag;
  std::vector<int> all_dims;
  int it = 0;

  int compute(const std::string& name, double flops, double mem_bytes, std::vector<int> deps,
              workload::ComputeKind kind) {
    workload::Node n;
    n.name = fmt::format("{} it{}", name, it);
    n.kind = workload::NodeKind::kCompute;
    n.compute = kind;
    n.flops = flops;
    n.mem_bytes = mem_bytes;
    n.iteration = it;
    for (int d : deps)
      if (d >= 0) n.deps.push_back(d);
    return dag.add(n);
  }
  int comm(const std::string& name, CollectiveKind op, double bytes, std::vector<int> deps, workload::CommGroup group) {
    workload::Node n;
    n.name = fmt::format("{} it{}", name, it);
    n.kind = workload::NodeKind::kComm;
    n.op = op;
    n.bytes = bytes;
    n.dims = all_dims;
    n.group = group;
    n.iteration = it;
    for (int d : deps)
      if (d >= 0) n.deps.push_back(d);
    return dag.add(n);
  }
};

}  // namespace

workload::Dag dlrm_workload(const DlrmSpec& s, int gpus, int num_dims, int iterations) {
  Builder b;
  b.dag.name = s.name;
  b.dag.iterations = iterations;
  for (int d = 0; d < num_dims; ++d) b.all_dims.push_back(d);
  const double batch = s.batch;
  // Square layers: w^2 parameters, 2 w^2 forward FLOP per sample (a multiply-add per weight).
  const MlpWidths widths = mlp_widths(s);
  const int bottom_layers = widths.bottom_layers;  // the rest is the top MLP
  const auto width = [&](int l) { return l < bottom_layers ? widths.bottom : widths.top; };
  const auto layer_flops = [&](int l) { return 2 * width(l) * width(l) * batch; };
  const auto layer_bytes = [&](int l) { return width(l) * width(l) * kFp32; };
  double top_bytes = 0, bottom_bytes = 0;
  for (int l = 0; l < s.mlp_layers; ++l) (l < bottom_layers ? bottom_bytes : top_bytes) += layer_bytes(l);
  // Per GPU and iteration: indices out (data-prep), pooled embeddings out (forward) and their
  // gradients back, batch x tables x dim, whichever GPU owns the table (Sec. 2.3 convention: a
  // GPU's whole send buffer).
  const double prep_bytes = batch * s.tables * s.pooling * kIndex;
  const double emb_bytes = batch * s.tables * s.dim * kFp32;
  // Lookups of the local tables for the global batch: gpus x batch samples x (tables / gpus)
  // tables x pooling rows of dim elements read (and written back in the backward).
  const double lookup_bytes = batch * s.tables * s.pooling * s.dim * kFp32;
  const double interaction_flops = batch * std::pow(s.tables + 1.0, 2) * s.dim;  // pairwise dots
  (void)gpus;

  std::vector<int> prev_param(static_cast<std::size_t>(s.mlp_layers), -1);  // what each layer's weights wait for
  int prev_prep = -1, prev_emb_update = -1;
  for (int it = 0; it < iterations; ++it) {
    b.it = it;
    const int prep = b.comm("a2a-data-prep", CollectiveKind::kAllToAll, prep_bytes, {prev_prep},
                            workload::CommGroup::kModelParallel);
    const int fwd_emb = b.compute("fwd-emb", 0, lookup_bytes, {prep, prev_emb_update}, workload::ComputeKind::kForward);
    const int a2a_fwd =
        b.comm("a2a-emb-fwd", CollectiveKind::kAllToAll, emb_bytes, {fwd_emb}, workload::CommGroup::kModelParallel);
    // Forward through the MLP layers, FSDP gathering each layer's shard first.
    std::vector<int> fwd(static_cast<std::size_t>(s.mlp_layers), -1);
    int last = -1;
    int interaction = -1;
    for (int l = 0; l < s.mlp_layers; ++l) {
      const bool top = l >= bottom_layers;
      if (l == bottom_layers) {
        interaction = b.compute("interaction", interaction_flops, 0, {last, a2a_fwd}, workload::ComputeKind::kForward);
        last = interaction;
      }
      int wait = prev_param[static_cast<std::size_t>(l)];
      if (s.fsdp)
        wait = b.comm(fmt::format("ag-fwd {}-mlp{}", top ? "top" : "bottom", l), CollectiveKind::kAllGather,
                      layer_bytes(l), {wait}, workload::CommGroup::kDataParallel);
      last = fwd[static_cast<std::size_t>(l)] =
          b.compute(fmt::format("fwd {}-mlp{}", top ? "top" : "bottom", l), layer_flops(l), 0, {last, wait},
                    workload::ComputeKind::kForward);
    }
    // Backward, top to bottom; the gradient traffic of each MLP as Fig. 13 names it.
    std::vector<int> grads_top, grads_bottom;
    int a2a_bwd = -1;
    for (int l = s.mlp_layers - 1; l >= 0; --l) {
      const bool top = l >= bottom_layers;
      int wait = -1;
      if (s.fsdp)
        wait = b.comm(fmt::format("ag-bwd {}-mlp{}", top ? "top" : "bottom", l), CollectiveKind::kAllGather,
                      layer_bytes(l), {last}, workload::CommGroup::kDataParallel);
      last = b.compute(fmt::format("bwd {}-mlp{}", top ? "top" : "bottom", l), 2 * layer_flops(l), 0, {last, wait},
                       workload::ComputeKind::kInputGradient);
      if (s.fsdp) {
        prev_param[static_cast<std::size_t>(l)] =
            b.comm(fmt::format("rs {}-mlp{}", top ? "top" : "bottom", l), CollectiveKind::kReduceScatter,
                   layer_bytes(l), {last}, workload::CommGroup::kDataParallel);
      } else {
        (top ? grads_top : grads_bottom).push_back(last);
      }
      if (l == bottom_layers) {
        // The top MLP is done: its gradients go out, and the interaction's gradient gives the
        // embeddings' gradients, sent back to the table owners.
        if (!s.fsdp) {
          const int ar =
              b.comm("ar-top-mlp", CollectiveKind::kAllReduce, top_bytes, {last}, workload::CommGroup::kDataParallel);
          for (int k = bottom_layers; k < s.mlp_layers; ++k) prev_param[static_cast<std::size_t>(k)] = ar;
        }
        last = b.compute("bwd interaction", interaction_flops, 0, {last}, workload::ComputeKind::kInputGradient);
        a2a_bwd =
            b.comm("a2a-emb-bwd", CollectiveKind::kAllToAll, emb_bytes, {last}, workload::CommGroup::kModelParallel);
      }
    }
    if (!s.fsdp) {
      const int ar =
          b.comm("ar-bottom-mlp", CollectiveKind::kAllReduce, bottom_bytes, {last}, workload::CommGroup::kDataParallel);
      for (int k = 0; k < bottom_layers; ++k) prev_param[static_cast<std::size_t>(k)] = ar;
    }
    prev_emb_update = b.compute("bwd-emb", 0, lookup_bytes, {a2a_bwd}, workload::ComputeKind::kWeightGradient);
    prev_prep = prep;
  }
  return b.dag;
}

workload::Dag moe_tiny_workload(int num_dims, int iterations) {
  Builder b;
  b.dag.name = "moe-tiny";
  b.dag.iterations = iterations;
  for (int d = 0; d < num_dims; ++d) b.all_dims.push_back(d);
  // 50 MFLOP per layer forward: 1 ms on the host topology (0.05 TFLOP/s); backward twice that.
  constexpr double kFlops = 50e6;
  constexpr double kTokens = 1024.0 * 1024;  // bytes per rank dispatched to the experts (1 MiB)
  const double grads[3] = {1e6, 1e6, 2e6};   // bytes of each layer's gradient
  int wait[3] = {-1, -1, -1};
  for (int it = 0; it < iterations; ++it) {
    b.it = it;
    int last = b.compute("fwd dense0", kFlops, 0, {wait[0]}, workload::ComputeKind::kForward);
    last = b.comm("a2a-dispatch", CollectiveKind::kAllToAll, kTokens, {last}, workload::CommGroup::kModelParallel);
    last = b.compute("fwd expert", kFlops, 0, {last, wait[1]}, workload::ComputeKind::kForward);
    last = b.comm("a2a-combine", CollectiveKind::kAllToAll, kTokens, {last}, workload::CommGroup::kModelParallel);
    last = b.compute("fwd dense2", kFlops, 0, {last, wait[2]}, workload::ComputeKind::kForward);
    last = b.compute("bwd dense2", 2 * kFlops, 0, {last}, workload::ComputeKind::kInputGradient);
    wait[2] = b.comm("ar dense2", CollectiveKind::kAllReduce, grads[2], {last}, workload::CommGroup::kDataParallel);
    last = b.comm("a2a-combine-bwd", CollectiveKind::kAllToAll, kTokens, {last}, workload::CommGroup::kModelParallel);
    last = b.compute("bwd expert", 2 * kFlops, 0, {last}, workload::ComputeKind::kInputGradient);
    wait[1] = b.comm("ar expert", CollectiveKind::kAllReduce, grads[1], {last}, workload::CommGroup::kDataParallel);
    last = b.comm("a2a-dispatch-bwd", CollectiveKind::kAllToAll, kTokens, {last}, workload::CommGroup::kModelParallel);
    last = b.compute("bwd dense0", 2 * kFlops, 0, {last}, workload::ComputeKind::kInputGradient);
    wait[0] = b.comm("ar dense0", CollectiveKind::kAllReduce, grads[0], {last}, workload::CommGroup::kDataParallel);
  }
  return b.dag;
}

}  // namespace chorus::syndicate
