#include "workload/parallelism.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.h"
#include "core/memory_budget.h"

namespace chorus::workload {

std::vector<int> model_parallel_dims(const net::Network& network, int mp_npus) {
  std::vector<int> dims;
  long long product = 1;
  for (int k = 0; k < network.num_dims(); ++k) {
    product *= network.dims[static_cast<size_t>(k)].size;
    if (product > mp_npus) break;
    dims.push_back(k);
  }
  return dims;
}

namespace {

long long npus_of(const net::Network& network, const std::vector<int>& dims) {
  long long n = 1;
  for (int k : dims) n *= network.dims[static_cast<size_t>(k)].size;
  return n;
}

std::string sizes_of(const net::Network& network) {
  std::vector<int> sizes;
  for (const auto& d : network.dims) sizes.push_back(d.size);
  return fmt::format("{}", fmt::join(sizes, " x "));
}

std::string group_text(const ParallelGroup& g) {
  if (g.dims.empty()) return "no dimension";
  return fmt::format("{} {}", g.dims.size() == 1 ? "dim" : "dims", fmt::join(g.dims, ", "));
}

}  // namespace

ParallelLayout parallel_layout(const Model& model, const ParallelismConfig& config, const net::Network& network,
                               const LayoutFields& fields) {
  ParallelLayout out;
  const bool experts = std::any_of(model.layers.begin(), model.layers.end(), [](const Layer& l) { return l.expert; });
  if (config.tp > 0) {
    const bool tensor_layers = !config.layer_mp.empty() || std::any_of(model.layers.begin(), model.layers.end(),
                                                                       [](const Layer& l) { return l.mp_all_reduce; });
    const char* why =
        model.embeddings.tables > 0
            ? "its embedding tables are sharded over all NPUs and its MLPs run data parallel (hybrid DLRM)"
        : experts        ? "its expert layers run expert parallel over the first dimensions (ep_npus)"
        : !tensor_layers ? "no layer of it is tensor parallel (none all-reduces its activations: mp_all_reduce)"
                         : nullptr;
    if (config.tp > 1 && why)
      throw InputError(fields.tp, fmt::format("{} takes no tensor parallelism: {}", model.name, why));
    std::vector<long long> choices = {1};
    long long product = 1;
    for (int k = 0; k < network.num_dims() && product < config.tp; ++k) {
      product *= network.dims[static_cast<size_t>(k)].size;
      out.tp.dims.push_back(k);
    }
    if (product != config.tp) {
      for (const auto& d : network.dims) choices.push_back(choices.back() * d.size);
      throw InputError(fields.tp, fmt::format("{} NPUs are no product of the network's first dimensions ({}): "
                                              "the tensor-parallel group is one of {} NPUs",
                                              config.tp, sizes_of(network), fmt::join(choices, ", ")));
    }
  } else {
    out.tp.dims = model_parallel_dims(network, config.mp_npus);
  }
  out.tp.npus = npus_of(network, out.tp.dims);
  out.pp.dims = pipeline_dims(network, config.pp_stages, fields.pp);
  out.pp.npus = npus_of(network, out.pp.dims);
  if (!out.pp.dims.empty() && !out.tp.dims.empty() && out.pp.dims.front() <= out.tp.dims.back())
    throw InputError(fields.pp, fmt::format("the pipeline's dimensions ({}) overlap the model-parallel group's ({})",
                                            fmt::join(out.pp.dims, ", "), fmt::join(out.tp.dims, ", ")));
  const int dp_end = out.pp.dims.empty() ? network.num_dims() : out.pp.dims.front();
  for (int k = static_cast<int>(out.tp.dims.size()); k < dp_end; ++k) out.dp.dims.push_back(k);
  out.dp.npus = npus_of(network, out.dp.dims);
  if (config.dp > 0 && config.dp != out.dp.npus)
    throw InputError(fields.dp,
                     fmt::format("tp {} x dp {} x pp {} = {} NPUs, but the network has {} ({}); with tp {} "
                                 "and pp {}, dp is {}",
                                 out.tp.npus, config.dp, out.pp.npus, out.tp.npus * config.dp * out.pp.npus,
                                 network.num_npus(), sizes_of(network), out.tp.npus, out.pp.npus, out.dp.npus));
  if (experts) {
    out.ep.dims = model_parallel_dims(network, config.ep_npus);
    out.ep.npus = npus_of(network, out.ep.dims);
  }
  out.embeddings = model.embeddings.tables > 0;
  return out;
}

std::string to_string(const ParallelLayout& layout) {
  std::string s = fmt::format("TP {} ({}) x DP {} ({}) x PP {} ({})", layout.tp.npus, group_text(layout.tp),
                              layout.dp.npus, group_text(layout.dp), layout.pp.npus, group_text(layout.pp));
  if (!layout.ep.dims.empty())
    s += fmt::format("; expert all-to-all over {} NPUs ({})", layout.ep.npus, group_text(layout.ep));
  if (layout.embeddings) s += "; embedding tables sharded over all NPUs (all-to-all)";
  return s;
}

namespace {

class Builder {
 public:
  Builder(const Model& model, const ParallelismConfig& config, const net::Network& network)
      : model_(model), config_(config), network_(network) {
    const auto layout = parallel_layout(model, config, network);
    mp_dims_ = layout.tp.dims;
    mp_ = static_cast<int>(layout.tp.npus);
    pp_dims_ = layout.pp.dims;
    dp_dims_ = layout.dp.dims;
    for (int k = 0; k < network.num_dims(); ++k) all_dims_.push_back(k);
    ep_dims_ = model_parallel_dims(network, config.ep_npus);
    for (int k = static_cast<int>(ep_dims_.size()); k < network.num_dims(); ++k) ep_dp_dims_.push_back(k);
    dag_.name = model.name;
    dag_.iterations = config.iterations;
    dag_.stages = config.pp_stages;
    dag_.layout = layout;
    param_ready_.assign(model.layers.size(), -1);
    microbatches_ = effective_microbatches(config);
    scale_ = 1.0 / microbatches_;
  }

  Dag build() {
    if (pipelined(config_)) {
      pipeline();
    } else {
      for (int it = 0; it < config_.iterations; ++it) iteration(it);
    }
    return std::move(dag_);
  }

 private:
  double elem_bytes(double elements) const { return elements * model_.bytes_per_element; }
  // Whether layer l is split over the model-parallel group (ParallelismConfig::layer_mp), the
  // share of its work and parameters an NPU holds, and whether it all-reduces its activations.
  bool split(int l) const { return config_.layer_mp.empty() || config_.layer_mp[static_cast<size_t>(l)]; }
  double share(int l) const { return split(l) ? mp_ : 1; }
  bool activation_all_reduce(int l) const {
    return mp_ > 1 && split(l) && (!config_.layer_mp.empty() || model_.layers[static_cast<size_t>(l)].mp_all_reduce);
  }
  // Per-layer choices: a split layer next to a replicated one gathers the group's activations
  // (forward: its input, from a replicated predecessor) or output gradients (backward: from a
  // replicated successor), since each NPU of the group holds only its own samples' share there.
  bool gathers_input(int l) const { return mp_ > 1 && !config_.layer_mp.empty() && l > 0 && split(l) && !split(l - 1); }
  bool gathers_output_grad(int l) const {
    return mp_ > 1 && !config_.layer_mp.empty() && l + 1 < static_cast<int>(model_.layers.size()) && split(l) &&
           !split(l + 1);
  }
  // Per-NPU share of a layer's parameters (split across the model-parallel group).
  double shard_params(int l) const { return model_.layers[static_cast<size_t>(l)].params / share(l); }
  // A micro-batch's share of the mini-batch's activations (scale_ = 1 / micro-batches).
  double act_bytes(double elements) const { return elem_bytes(elements) * scale_; }
  double layer_mem_bytes(int l) const {
    const auto& layer = model_.layers[static_cast<size_t>(l)];
    return elem_bytes(shard_params(l) + (layer.input_elements + layer.output_elements) * scale_);
  }
  double layer_flops(int l) const { return model_.layers[static_cast<size_t>(l)].forward_flops / share(l) * scale_; }

  int compute(const std::string& name, ComputeKind kind, double flops, double mem, int layer, int it,
              std::vector<int> deps) {
    Node n;
    n.name = name;
    n.kind = NodeKind::kCompute;
    n.compute = kind;
    n.flops = flops;
    n.mem_bytes = mem;
    n.layer = layer;
    n.iteration = it;
    n.stage = stage_;
    // A pipeline stage runs its forward and backward passes in the schedule's order: each
    // waits for the stage's previous one (the optimizer, which waits for the gradients'
    // synchronization, does not hold the stream).
    if (kind != ComputeKind::kOptimizer && std::find(deps.begin(), deps.end(), order_dep_) == deps.end())
      deps.push_back(order_dep_);
    n.deps = clean(std::move(deps));
    const int id = dag_.add(std::move(n));
    if (kind != ComputeKind::kOptimizer) last_compute_ = id;
    return id;
  }

  int comm(const std::string& name, CollectiveKind op, double bytes, const std::vector<int>& dims, CommGroup group,
           int layer, int it, std::vector<int> deps) {
    Node n;
    n.name = name;
    n.kind = NodeKind::kComm;
    n.op = op;
    n.bytes = bytes;
    n.dims = dims;
    n.group = group;
    n.layer = layer;
    n.iteration = it;
    n.stage = stage_;
    n.deps = clean(std::move(deps));
    return dag_.add(std::move(n));
  }

  static std::vector<int> clean(std::vector<int> deps) {
    std::erase(deps, -1);
    return deps;
  }

  // Forward of layer l (possibly recomputed in backward), followed by its model-parallel
  // all-reduce. Returns the node that produces the layer's output.
  int forward(int l, int it, int prev, bool recomputed, int extra = -1) {
    const auto& layer = model_.layers[static_cast<size_t>(l)];
    const std::string tag = recomputed ? "recompute" : "fwd";
    const bool moe = layer.expert && !ep_dims_.empty();
    if (moe)
      prev = comm(fmt::format("ep {}-dispatch {} it{}", tag, layer.name, it), CollectiveKind::kAllToAll,
                  act_bytes(layer.input_elements), ep_dims_, CommGroup::kModelParallel, l, it, {prev});
    if (gathers_input(l))
      prev = comm(fmt::format("mp {}-ag {} it{}", tag, layer.name, it), CollectiveKind::kAllGather,
                  act_bytes(layer.input_elements), mp_dims_, CommGroup::kModelParallel, l, it, {prev});
    int out = compute(fmt::format("{} {} it{}", tag, layer.name, it), ComputeKind::kForward, layer_flops(l),
                      layer_mem_bytes(l), l, it, {prev, param_ready_[static_cast<size_t>(l)], extra});
    if (activation_all_reduce(l))
      out = comm(fmt::format("mp {}-ar {} it{}", tag, layer.name, it), CollectiveKind::kAllReduce,
                 act_bytes(layer.output_elements), mp_dims_, CommGroup::kModelParallel, l, it, {out});
    if (moe)
      out = comm(fmt::format("ep {}-combine {} it{}", tag, layer.name, it), CollectiveKind::kAllToAll,
                 act_bytes(layer.output_elements), ep_dims_, CommGroup::kModelParallel, l, it, {out});
    return out;
  }

  void iteration(int it) {
    const int num_layers = static_cast<int>(model_.layers.size());
    const auto& emb = model_.embeddings;
    const bool hybrid = emb.tables > 0;
    // Embedding lookups: each NPU reads its tables' rows for the batch; the all-to-all hands
    // every NPU its samples' vectors (batch x tables x dim values, the same size each way).
    const double emb_bytes = hybrid ? elem_bytes(static_cast<double>(model_.batch_per_npu) * emb.tables * emb.dim) : 0;
    int a2a = -1;
    if (hybrid) {
      const int lookup =
          compute(fmt::format("emb lookup it{}", it), ComputeKind::kForward, 0, emb_bytes, -1, it, {emb_ready_});
      a2a = comm(fmt::format("mp emb a2a it{}", it), CollectiveKind::kAllToAll, emb_bytes, all_dims_,
                 CommGroup::kModelParallel, -1, it, {lookup});
    }
    int prev = -1;
    for (int l = 0; l < num_layers; ++l) {
      if (hybrid && l == emb.top_start) {
        // The bottom MLP's output and the embeddings meet in the interaction, before the top MLP.
        prev = forward(l, it, prev, false, a2a);
      } else {
        prev = forward(l, it, prev, false);
      }
    }
    backward(it, 0, num_layers, prev, true, emb_bytes);
  }

  // Back-propagation through layers end - 1 down to first, starting when node `grad` (which
  // produces the gradient of layer end - 1's output) is done; returns the node that produces
  // layer first's input gradient. With `sync` (the mini-batch's last backward pass) the weight
  // gradients are synchronized in buckets and applied.
  int backward(int it, int first, int end, int grad, bool sync, double emb_bytes = 0) {
    const auto& emb = model_.embeddings;
    const bool hybrid = emb.tables > 0;
    // Gradients of split layers go over the data-parallel group, those of replicated layers
    // (ParallelismConfig::layer_mp) over all NPUs: a bucket per group.
    Bucket buckets[2] = {{{}, {}, 0, dp_dims_}, {{}, {}, 0, all_dims_}};
    for (int l = end - 1; l >= first; --l) {
      const auto& layer = model_.layers[static_cast<size_t>(l)];
      if (gathers_output_grad(l))
        grad = comm(fmt::format("mp grad-ag {} it{}", layer.name, it), CollectiveKind::kAllGather,
                    act_bytes(layer.output_elements), mp_dims_, CommGroup::kModelParallel, l, it, {grad});
      if (config_.recompute) grad = forward(l, it, grad, true);
      const bool moe = layer.expert && !ep_dims_.empty();
      if (moe)  // output gradients back to the experts that produced the outputs
        grad = comm(fmt::format("ep grad-dispatch {} it{}", layer.name, it), CollectiveKind::kAllToAll,
                    act_bytes(layer.output_elements), ep_dims_, CommGroup::kModelParallel, l, it, {grad});
      const double mem = layer_mem_bytes(l);
      int next_grad = grad;
      if (l > 0) {  // the first layer needs no input gradient
        next_grad = compute(fmt::format("ig {} it{}", layer.name, it), ComputeKind::kInputGradient, layer_flops(l), mem,
                            l, it, {grad});
        if (activation_all_reduce(l))
          next_grad = comm(fmt::format("mp ig-ar {} it{}", layer.name, it), CollectiveKind::kAllReduce,
                           act_bytes(layer.input_elements), mp_dims_, CommGroup::kModelParallel, l, it, {next_grad});
        if (moe)  // input gradients back to the tokens' home NPUs
          next_grad = comm(fmt::format("ep grad-combine {} it{}", layer.name, it), CollectiveKind::kAllToAll,
                           act_bytes(layer.input_elements), ep_dims_, CommGroup::kModelParallel, l, it, {next_grad});
      }
      if (hybrid && l == emb.top_start) {
        // Embedding gradients go back to the tables' owners, which then update them.
        const int back = comm(fmt::format("mp emb-grad a2a it{}", it), CollectiveKind::kAllToAll, emb_bytes, all_dims_,
                              CommGroup::kModelParallel, -1, it, {next_grad});
        emb_ready_ =
            compute(fmt::format("emb update it{}", it), ComputeKind::kOptimizer, 0, 2 * emb_bytes, -1, it, {back});
      }
      if (layer.params > 0 && moe) {
        // An expert's gradient is shared only with the replicas of the same expert.
        const int wg = compute(fmt::format("wg {} it{}", layer.name, it), ComputeKind::kWeightGradient, layer_flops(l),
                               mem, l, it, {grad});
        deferred_.push_back({{l}, {wg}, elem_bytes(shard_params(l)), ep_dp_dims_});
        if (config_.overlap_dp) {
          flush(it, deferred_.back());
          deferred_.clear();
        }
      } else if (layer.params > 0) {
        const int wg = compute(fmt::format("wg {} it{}", layer.name, it), ComputeKind::kWeightGradient, layer_flops(l),
                               mem, l, it, {grad});
        if (sync) {
          auto& b = buckets[split(l) ? 0 : 1];
          b.layers.push_back(l);
          b.wgs.push_back(wg);
          b.bytes += elem_bytes(shard_params(l));
        }
      }
      grad = next_grad;
      for (auto& b : buckets)
        if (!b.layers.empty() && (b.bytes >= config_.bucket_bytes || l == first)) {
          deferred_.push_back(b);
          if (config_.overlap_dp) {
            flush(it, deferred_.back());
            deferred_.clear();
          }
          b.layers.clear();
          b.wgs.clear();
          b.bytes = 0;
        }
    }
    // Without overlap every bucket waits for the end of back-propagation.
    for (auto& b : deferred_) {
      b.wgs.push_back(last_compute_);
      flush(it, b);
    }
    deferred_.clear();
    return grad;
  }

  // Pipeline parallelism: every stage's schedule, emitted in an order where each node's
  // dependencies come first (a stage's forward of micro-batch m after the previous stage's,
  // its backward after the next stage's).
  void pipeline() {
    const int stages = config_.pp_stages, mbs = microbatches_, iterations = config_.iterations;
    // Balanced by each layer's compute time per micro-batch under the run's compute model:
    // forward, input gradient (not the first layer) and weight gradient (layers with
    // parameters), roofline each.
    std::vector<double> cost;
    for (int l = 0; l < static_cast<int>(model_.layers.size()); ++l) {
      const double pass = config_.compute.time_ns(layer_flops(l), layer_mem_bytes(l));
      cost.push_back(pass * (1 + (l > 0 ? 1 : 0) + (model_.layers[static_cast<size_t>(l)].params > 0 ? 1 : 0)));
    }
    const auto first = partition_layers(cost, stages);
    std::vector<std::vector<PipelineOp>> ops(static_cast<size_t>(stages));
    for (int s = 0; s < stages; ++s)
      ops[static_cast<size_t>(s)] = pipeline_ops(config_.pipeline_schedule, stages, s, mbs);
    const size_t per_it = 2 * static_cast<size_t>(mbs);
    // Per (iteration, micro-batch, stage): the node that hands the activations to the next
    // stage (the last stage: its output, where back-propagation starts) and the one that
    // hands the input gradient to the previous stage; -2 until emitted.
    const size_t slots = static_cast<size_t>(iterations) * static_cast<size_t>(mbs) * static_cast<size_t>(stages);
    std::vector<int> act(slots, -2), grad(slots, -2);
    auto slot = [&](int it, int m, int s) {
      return (static_cast<size_t>(it) * static_cast<size_t>(mbs) + static_cast<size_t>(m)) *
                 static_cast<size_t>(stages) +
             static_cast<size_t>(s);
    };
    std::vector<size_t> next(static_cast<size_t>(stages), 0);  // per stage: ops emitted, over all iterations
    std::vector<int> stage_last(static_cast<size_t>(stages), -1);
    const size_t total = per_it * static_cast<size_t>(iterations);
    for (bool progress = true; progress;) {
      progress = false;
      for (int s = 0; s < stages; ++s) {
        auto& k = next[static_cast<size_t>(s)];
        while (k < total) {
          const int it = static_cast<int>(k / per_it);
          const auto op = ops[static_cast<size_t>(s)][k % per_it];
          const int m = op.microbatch;
          const int from = op.forward ? (s > 0 ? act[slot(it, m, s - 1)] : -1)
                                      : (s + 1 < stages ? grad[slot(it, m, s + 1)] : act[slot(it, m, s)]);
          if (from == -2) break;  // the neighbouring stage has not got there yet
          stage_ = s;
          order_dep_ = stage_last[static_cast<size_t>(s)];
          const int begin = static_cast<int>(dag_.nodes.size());
          const int lo = first[static_cast<size_t>(s)], hi = first[static_cast<size_t>(s) + 1];
          if (op.forward) {
            int out = from;
            for (int l = lo; l < hi; ++l) out = forward(l, it, out, false);
            if (s + 1 < stages)
              out = send(fmt::format("pp send-act {} it{}", model_.layers[static_cast<size_t>(hi) - 1].name, it),
                         act_bytes(model_.layers[static_cast<size_t>(hi) - 1].output_elements), s, hi - 1, it, {out});
            act[slot(it, m, s)] = out;
          } else {
            int out = backward(it, lo, hi, from, m == mbs - 1);
            // The input gradient leaves when the pass is over, weight gradients included, as
            // the schedules assume (a backward pass is one unit of work).
            if (s > 0)
              out = send(fmt::format("pp send-grad {} it{}", model_.layers[static_cast<size_t>(lo)].name, it),
                         act_bytes(model_.layers[static_cast<size_t>(lo)].input_elements), s - 1, lo, it,
                         {out, last_compute_});
            grad[slot(it, m, s)] = out;
          }
          stage_last[static_cast<size_t>(s)] = last_compute_;
          for (size_t i = static_cast<size_t>(begin); i < dag_.nodes.size(); ++i)
            dag_.nodes[i].name += fmt::format(" mb{}", m);
          ++k;
          progress = true;
        }
      }
    }
    for (int s = 0; s < stages; ++s)
      if (next[static_cast<size_t>(s)] < total)
        throw std::logic_error(fmt::format("{}: pipeline schedule {} stalls at stage {}", model_.name,
                                           to_string(config_.pipeline_schedule), s));
    stage_ = 0;
    order_dep_ = -1;
  }

  // A point-to-point transfer from the current stage to the neighbouring stage `link` links
  // to (stage_link_dim of the lower of the two).
  int send(const std::string& name, double bytes, int link, int layer, int it, std::vector<int> deps) {
    if (deps.size() == 2 && deps[0] == deps[1]) deps.pop_back();
    const int id = comm(name, CollectiveKind::kAllReduce, bytes, {stage_link_dim(network_, pp_dims_, link)},
                        CommGroup::kPipeline, layer, it, std::move(deps));
    dag_.nodes[static_cast<size_t>(id)].comm = CommKind::kPointToPoint;
    return id;
  }

  struct Bucket {
    std::vector<int> layers, wgs;
    double bytes;
    std::vector<int> dims;  // the group the gradients are shared with
  };

  // Synchronizes one bucket of weight gradients over the data-parallel group and updates
  // the parameters; the layers' next forward waits for the result.
  void flush(int it, const Bucket& b) {
    const auto& layers = b.layers;
    const auto& wgs = b.wgs;
    const double bytes = b.bytes;
    const auto& dims = b.dims;
    const auto& first = model_.layers[static_cast<size_t>(layers.front())];
    const auto& last = model_.layers[static_cast<size_t>(layers.back())];
    const std::string label = layers.size() == 1 ? first.name : fmt::format("{}..{}", last.name, first.name);
    const int key_layer = layers.back();
    int ready = -1;
    double params = 0;
    for (int l : layers) params += shard_params(l);
    if (config_.zero2) {
      int rs = comm(fmt::format("dp rs {} it{}", label, it), CollectiveKind::kReduceScatter, bytes, dims,
                    CommGroup::kDataParallel, key_layer, it, wgs);
      if (dims.empty()) rs = -1;
      const int opt = compute(fmt::format("opt {} it{}", label, it), ComputeKind::kOptimizer, 0, 0, key_layer, it,
                              rs >= 0 ? std::vector<int>{rs} : wgs);
      // Each NPU owns 1/dp of the parameters; the all-gather's size is the gathered size.
      ready = dims.empty() ? opt
                           : comm(fmt::format("dp ag {} it{}", label, it), CollectiveKind::kAllGather,
                                  elem_bytes(params), dims, CommGroup::kDataParallel, key_layer, it, {opt});
    } else {
      std::vector<int> deps = wgs;
      if (!dims.empty())
        deps = {comm(fmt::format("dp ar {} it{}", label, it), CollectiveKind::kAllReduce, bytes, dims,
                     CommGroup::kDataParallel, key_layer, it, wgs)};
      ready = compute(fmt::format("opt {} it{}", label, it), ComputeKind::kOptimizer, 0, 0, key_layer, it, deps);
    }
    for (int l : layers) param_ready_[static_cast<size_t>(l)] = ready;
  }

  const Model& model_;
  ParallelismConfig config_;
  const net::Network& network_;
  std::vector<int> mp_dims_, dp_dims_, pp_dims_, all_dims_, ep_dims_, ep_dp_dims_;
  int emb_ready_ = -1;  // the node after which the embedding tables are current
  int mp_ = 1;
  Dag dag_;
  std::vector<int> param_ready_;  // per layer: the node after which its parameters are current
  std::vector<Bucket> deferred_;
  int last_compute_ = -1;  // the last compute node emitted (not an optimizer)
  // Pipeline parallelism: micro-batches, their share of the activations, the stage being
  // emitted and the compute node its next pass waits for (-1: none).
  int microbatches_ = 1;
  double scale_ = 1;
  int stage_ = 0;
  int order_dep_ = -1;
};

}  // namespace

net::Network logical_network(const ParallelismConfig& config, int npus) {
  const int group = std::max(config.tp > 0 ? config.tp : config.mp_npus, config.ep_npus);
  net::Network logical;
  logical.name = fmt::format("{} servers", npus);
  net::Dimension dim;
  dim.kind = net::DimKind::kRing;
  dim.link_bandwidth_gbps = 100;
  if (group > 1 && group < npus && npus % group == 0) {
    dim.size = group;
    logical.dims.push_back(dim);
    dim.size = npus / group;
    logical.dims.push_back(dim);
  } else {
    dim.size = npus;
    logical.dims.push_back(dim);
  }
  return logical;
}

int effective_microbatches(const ParallelismConfig& config) {
  return config.microbatches > 0 ? config.microbatches : config.pp_stages > 1 ? 4 * config.pp_stages : 1;
}

bool pipelined(const ParallelismConfig& config) { return config.pp_stages > 1 || effective_microbatches(config) > 1; }

Dag build_training_dag(const Model& model, const ParallelismConfig& config, const net::Network& network) {
  require_range(config.iterations, 1, kMaxTrainingIterations, "iterations");
  if (config.mp_npus < 1)
    throw InputError(model.name, fmt::format("model-parallel NPUs must be >= 1, got {}", config.mp_npus));
  if (config.ep_npus < 1)
    throw InputError(model.name, fmt::format("expert-parallel NPUs must be >= 1, got {}", config.ep_npus));
  if (!(config.bucket_bytes >= 0)) throw InputError("bucket_bytes", "bucket size must be >= 0");
  if (!config.layer_mp.empty() && config.layer_mp.size() != model.layers.size())
    throw InputError(model.name, fmt::format("the per-layer parallelization names {} layers but the model has {}",
                                             config.layer_mp.size(), model.layers.size()));
  if (config.pp_stages < 1) throw InputError("pp_stages", fmt::format("must be >= 1, got {}", config.pp_stages));
  if (config.microbatches < 0)
    throw InputError("microbatches", fmt::format("must be >= 1, got {}", config.microbatches));
  if (pipelined(config)) {
    const char* other = model.embeddings.tables > 0 ? "embedding tables (hybrid DLRM)"
                        : !config.layer_mp.empty()  ? "per-layer model-parallel choices"
                        : std::any_of(model.layers.begin(), model.layers.end(), [](const Layer& l) { return l.expert; })
                            ? "expert (MoE) layers"
                            : nullptr;
    if (other)
      throw InputError(model.name, fmt::format("pipeline parallelism and micro-batches do not combine with {}", other));
    if (config.pp_stages > static_cast<int>(model.layers.size()))
      throw InputError("pp_stages", fmt::format("{} stages need at least as many layers; {} has {}", config.pp_stages,
                                                model.name, model.layers.size()));
  }
  const auto& emb = model.embeddings;
  if (emb.tables > 0 && (emb.dim < 1 || emb.top_start < 1 || emb.top_start >= static_cast<int>(model.layers.size())))
    throw InputError(model.name, "embeddings need dim >= 1 and a top MLP that starts after the first layer");
  return Builder(model, config, network).build();
}

}  // namespace chorus::workload
