#include "workload/zoo.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/suggest.h"

namespace chorus::workload {
namespace {

// A convolution followed by batch normalization (no conv bias), as in He et al. 2015.
struct ConvNet {
  Model model;
  int channels, height, width;

  void conv(const std::string& name, int out, int k, int stride) {
    const int pad = k / 2;
    const int ho = (height + 2 * pad - k) / stride + 1;
    const int wo = (width + 2 * pad - k) / stride + 1;
    Layer l;
    l.name = name;
    const double b = model.batch_per_npu;
    const double macs = static_cast<double>(k) * k * channels * out * ho * wo;
    l.forward_flops = 2 * macs * b;
    l.params = static_cast<double>(k) * k * channels * out + 2.0 * out;  // weights + BN scale/shift
    l.input_elements = b * channels * height * width;
    l.output_elements = b * out * ho * wo;
    model.layers.push_back(l);
    channels = out;
    height = ho;
    width = wo;
  }
};

}  // namespace

// He et al., "Deep Residual Learning for Image Recognition" (2015), Table 1, 152-layer
// column: conv1 7x7/2 64; 3x3/2 max pool; bottleneck stages [1x1 w, 3x3 w, 1x1 4w] x
// {3, 8, 36, 3} with w = 64, 128, 256, 512, stride 2 on the first 3x3 of stages 3-5 (the
// torchvision "v1.5" placement), 1x1 projection shortcuts where the shape changes; global
// average pool; 1000-way fully connected. Input 224 x 224 x 3.
Model resnet152(int batch) {
  ConvNet net{Model{"resnet152", batch, 2, {}, {}}, 3, 224, 224};
  net.conv("conv1", 64, 7, 2);
  net.height = (net.height + 2 - 3) / 2 + 1;  // 3x3 stride-2 max pool, padding 1: no parameters
  net.width = (net.width + 2 - 3) / 2 + 1;
  const int blocks[4] = {3, 8, 36, 3};
  for (int s = 0; s < 4; ++s) {
    const int w = 64 << s;
    for (int b = 0; b < blocks[s]; ++b) {
      const int stride = (b == 0 && s > 0) ? 2 : 1;
      const int in_c = net.channels, in_h = net.height, in_w = net.width;
      const std::string base = fmt::format("conv{}_{}", s + 2, b + 1);
      net.conv(base + "a", w, 1, 1);
      net.conv(base + "b", w, 3, stride);
      net.conv(base + "c", 4 * w, 1, 1);
      if (b == 0) {  // projection shortcut (1x1, stride) on the block input
        const int out_c = net.channels, out_h = net.height, out_w = net.width;
        net.channels = in_c;
        net.height = in_h;
        net.width = in_w;
        net.conv(base + "_proj", 4 * w, 1, stride);
        net.channels = out_c;
        net.height = out_h;
        net.width = out_w;
      }
    }
  }
  Layer fc;
  fc.name = "fc1000";
  const double b = batch;
  fc.forward_flops = 2.0 * net.channels * 1000 * b;
  fc.params = net.channels * 1000.0 + 1000;
  fc.input_elements = b * net.channels;
  fc.output_elements = b * 1000;
  net.model.layers.push_back(fc);
  return net.model;
}

namespace {

// One transformer layer as the two blocks Megatron-LM partitions for tensor parallelism
// (Shoeybi et al. 2019, Sec. 3): attention (the Q, K, V and output projections, h x h each)
// and MLP (h -> 4h -> h). Forward FLOPs = 2 x parameters x tokens (one multiply-add per
// weight per token) plus, in attention, the scores Q K^T and the context (scores x V),
// 2 x 2 s^2 h per sequence; the head count changes neither. With `biases_and_norms` (BERT)
// every projection has its bias and each block ends with a layer norm (scale and shift, 2h),
// counted in the parameters and, by the same 2 x parameters x tokens rule, in the FLOPs;
// without (the sizes of Megatron's Table 1) the weight matrices only. With `tensor_parallel`
// each block ends in Megatron's all-reduce (after the attention output projection and after
// the MLP's second linear layer).
struct TransformerLayer {
  Layer attn, mlp;
};

TransformerLayer transformer_layer(int index, double h, double s, double b, bool biases_and_norms,
                                   bool tensor_parallel) {
  const double tokens = b * s;
  TransformerLayer t;
  t.attn.name = fmt::format("layer{}.attn", index);
  t.attn.params = 4 * h * h + (biases_and_norms ? 4 * h + 2 * h : 0);
  t.attn.forward_flops = 2 * t.attn.params * tokens + 4 * b * s * s * h;
  t.attn.input_elements = t.attn.output_elements = tokens * h;
  t.attn.mp_all_reduce = tensor_parallel;
  t.mlp.name = fmt::format("layer{}.mlp", index);
  t.mlp.params = 8 * h * h + (biases_and_norms ? 4 * h + h + 2 * h : 0);
  t.mlp.forward_flops = 2 * t.mlp.params * tokens;
  t.mlp.input_elements = t.mlp.output_elements = tokens * h;
  t.mlp.mp_all_reduce = tensor_parallel;
  return t;
}

}  // namespace

// A dense GPT-style Transformer of one trillion parameters: Narayanan et al., "Efficient
// Large-Scale Language Model Training on GPU Clusters Using Megatron-LM" (SC '21), Table 1,
// 1T row: 128 layers, hidden size h = 25600, 160 heads, sequence length s = 2048. Each layer
// is two blocks, each ending with a tensor-parallel all-reduce: attention (4h^2 parameters,
// 8 B s h^2 + 4 B s^2 h forward FLOPs) and MLP (8h^2 parameters, 16 B s h^2 forward FLOPs),
// giving the paper's 24 B s h^2 (1 + s / 6h) per layer. Embeddings are left out (1.3 G
// parameters of 1008 G).
Model transformer_1t(int batch) {
  Model m{"transformer-1t", batch, 2, {}, {}};
  for (int i = 0; i < 128; ++i) {
    const auto t = transformer_layer(i, 25600, 2048, batch, false, true);
    m.layers.push_back(t.attn);
    m.layers.push_back(t.mlp);
  }
  return m;
}

namespace {

Layer fully_connected(const std::string& name, int in, int out, int batch) {
  Layer l;
  l.name = name;
  const double b = batch;
  l.forward_flops = 2.0 * in * out * b;
  l.params = static_cast<double>(in) * out + out;
  l.input_elements = b * in;
  l.output_elements = b * out;
  return l;
}

}  // namespace

// DLRM (Naumov et al. 2019) in the configuration of the MLPerf Training DLRM benchmark
// (Criteo Terabyte): 13 dense features, bottom MLP 13-512-256-128, 26 embedding tables of
// dimension 128, dot-product interaction of the 27 vectors (128 + 27*26/2 = 479 features),
// top MLP 479-1024-1024-512-256-1. Themis cites the DLRM of Rashidi et al. (HOTI 2020, its
// ref. [53]) without sizes; this is the published DLRM configuration whose sizes are all
// stated. The interaction's own FLOPs (< 2 % of the top MLP's) are left out.
Model dlrm(int batch) {
  Model m{"dlrm", batch, 2, {}, {}};
  const int bottom[] = {13, 512, 256, 128};
  for (int i = 0; i < 3; ++i)
    m.layers.push_back(fully_connected(fmt::format("bot_mlp{}", i), bottom[i], bottom[i + 1], batch));
  const int top[] = {479, 1024, 1024, 512, 256, 1};
  for (int i = 0; i < 5; ++i)
    m.layers.push_back(fully_connected(fmt::format("top_mlp{}", i), top[i], top[i + 1], batch));
  m.embeddings = Embeddings{26, 128, 3};
  return m;
}

namespace {

// An LSTM layer over `tokens` time steps x samples: 4 gates of h units on [input, hidden].
Layer lstm(const std::string& name, int in, int h, double tokens) {
  Layer l;
  l.name = name;
  const double gates = 4.0 * h;
  l.params = gates * (in + h) + gates;
  l.forward_flops = 2 * gates * (in + h) * tokens;
  l.input_elements = tokens * in;
  l.output_elements = tokens * h;
  return l;
}

}  // namespace

// GNMT: Wu et al., "Google's Neural Machine Translation System" (2016), Sec. 3-4: 8 encoder
// LSTM layers, the bottom one bi-directional, 8 decoder layers, 1024 units per layer, a
// one-layer additive attention whose context feeds every decoder layer, a shared 32K
// wordpiece vocabulary with 1024-wide embeddings, softmax over it. Our reading where the
// paper is silent: each direction of the bottom layer has 1024 units (2048-wide input to
// layer 2), 50 tokens per sentence for source and target.
Model gnmt(int batch) {
  const int h = 1024, vocab = 32000, seq = 50;
  const double tokens = static_cast<double>(batch) * seq;
  Model m{"gnmt", batch, 2, {}, {}};
  Layer emb;
  emb.name = "enc_embedding";
  emb.params = static_cast<double>(vocab) * h;
  emb.input_elements = tokens;
  emb.output_elements = tokens * h;
  m.layers.push_back(emb);
  Layer bi = lstm("enc_lstm0_bidir", h, h, tokens);
  bi.params *= 2;
  bi.forward_flops *= 2;
  bi.output_elements *= 2;
  m.layers.push_back(bi);
  m.layers.push_back(lstm("enc_lstm1", 2 * h, h, tokens));
  for (int i = 2; i < 8; ++i) m.layers.push_back(lstm(fmt::format("enc_lstm{}", i), h, h, tokens));
  emb.name = "dec_embedding";
  m.layers.push_back(emb);
  Layer att;
  att.name = "attention";
  att.params = 2.0 * h * h + h;
  // Key and query projections, then scores and context over every source position.
  att.forward_flops = 4 * tokens * h * h + 4 * tokens * seq * h;
  att.input_elements = 2 * tokens * h;
  att.output_elements = tokens * h;
  m.layers.push_back(att);
  for (int i = 0; i < 8; ++i) m.layers.push_back(lstm(fmt::format("dec_lstm{}", i), 2 * h, h, tokens));
  m.layers.push_back(fully_connected("softmax", h, vocab, static_cast<int>(tokens)));
  return m;
}

// A DeepSpeed-MoE-like model: Rajbhandari et al., "DeepSpeed-MoE" (ICML 2022), the
// "1.3B+MoE-128" configuration: 24 layers, hidden 2048, sequence 2048, an expert FFN (128
// experts, top-1 gating) in every other layer. Expert parallel over 128 NPUs, one expert per
// NPU; everything else data parallel. Batch per NPU is our choice (the CLI default 4).
Model moe(int batch) {
  Model m{"moe", batch, 2, {}, {}};
  for (int i = 0; i < 24; ++i) {
    auto t = transformer_layer(i, 2048, 2048, batch, false, false);
    // The FFN is dense, or the one expert this NPU holds (top-1: every token through one FFN).
    t.mlp.name = fmt::format("layer{}.{}", i, i % 2 ? "experts" : "ffn");
    t.mlp.expert = i % 2 == 1;
    m.layers.push_back(t.attn);
    m.layers.push_back(t.mlp);
  }
  return m;
}

// The models of the TopoOpt paper's simulations (Wang et al., "TopoOpt: Co-optimizing Network
// Topology and Parallelization Strategy for Distributed Training Jobs", NSDI '23), Table 2,
// top row (the dedicated clusters of Sec. 5.3: servers of four A100 GPUs). TopoOpt's FlexNet
// extends FlexFlow's simulator, whose example models (candle_uno, DLRM's MLPs) are FP32: 4
// bytes per element. TopoOpt found each strategy by FlexFlow's search and does not publish
// it; ours are fixed below.

// CANDLE Uno (the ECP-CANDLE benchmarks, Pilot 1 "Uno": tumor dose response from cell and
// drug features), TopoOpt Table 2: batch 256 per GPU, 16 dense feature layers of 16384, 8
// dense layers of 16384. Data parallel only (TopoOpt Sec. 5.3: "the best parallelization
// strategy for CANDLE at this scale is mostly data parallel"). Our readings: one chain of
// fully connected layers with biases (Uno's Keras Dense layers): the 16 feature layers on the
// concatenated inputs, then the 8 dense layers, then Uno's one-output regression layer
// (16384 -> 1). Input width 15580: the inputs of FlexFlow's candle_uno example (the model
// TopoOpt's simulator runs), concatenated: cell RNA-seq 942, two drugs' descriptors 5270 and
// fingerprints 2048 each, two doses 1 each (942 + 2 x 5270 + 2 x 2048 + 2). FlexFlow builds
// one feature tower per cell/drug input (five) where we build one; that example's layers
// have no biases.
Model candle_uno(int batch) {
  const int width = 16384, inputs = 942 + 2 * 5270 + 2 * 2048 + 2;
  Model m{"topoopt-candle", batch, 4, {}, {}};
  for (int i = 0; i < 16; ++i)
    m.layers.push_back(fully_connected(fmt::format("feature{}", i), i == 0 ? inputs : width, width, batch));
  for (int i = 0; i < 8; ++i) m.layers.push_back(fully_connected(fmt::format("dense{}", i), width, width, batch));
  m.layers.push_back(fully_connected("output", width, 1, batch));
  return m;
}

// BERT (Devlin et al., "BERT: Pre-training of Deep Bidirectional Transformers for Language
// Understanding", NAACL 2019) in TopoOpt Table 2's configuration: batch 16 sequences per GPU,
// 12 transformer blocks, hidden 1024, 16 attention heads, sequence 64, "Embed. size: 512".
// The encoder as BERT builds it: an embedding layer (WordPiece vocabulary of 30522, 512
// positions, 2 segment types, all 1024 wide, then a layer norm), 12 post-norm transformer
// layers (transformer_layer above with biases and norms, FFN 4 x 1024). Our readings: "Embed.
// size: 512" is BERT's maximum position embeddings (512; the table's hidden is the embedding
// width, 1024); the pooler and pre-training heads are left out; the embedding lookup has no
// FLOPs. Strategy (ours): tensor parallel over the four GPUs of a server (mp_npus = 4),
// Megatron style, with all-reduces after the attention output projection, the MLP's second
// layer and the vocabulary-parallel embedding (Megatron's VocabParallelEmbedding all-reduces
// its output in the forward pass); data parallel over the rest. Every layer's parameters and
// FLOPs are split over the group, the replicated layer norms and position embeddings included.
Model bert_topoopt(int batch) {
  const int h = 1024, s = 64, vocab = 30522, positions = 512, segments = 2;
  const double tokens = static_cast<double>(batch) * s;
  Model m{"topoopt-bert", batch, 4, {}, {}};
  Layer emb;
  emb.name = "embeddings";
  emb.params = static_cast<double>(vocab + positions + segments) * h + 2.0 * h;
  emb.input_elements = tokens;
  emb.output_elements = tokens * h;
  emb.mp_all_reduce = true;
  m.layers.push_back(emb);
  for (int i = 0; i < 12; ++i) {
    const auto t = transformer_layer(i, h, s, batch, true, true);
    m.layers.push_back(t.attn);
    m.layers.push_back(t.mlp);
  }
  return m;
}

// DLRM (Naumov et al., "Deep Learning Recommendation Model for Personalization and
// Recommendation Systems", 2019) in TopoOpt Table 2's configuration: batch 128 per GPU, 16
// dense feature layers of 4096 (the bottom MLP, on the dense features), 8 dense layers of 2048
// (the top MLP), 64 embedding tables of 10^7 rows x 128. Hybrid parallel as `dlrm`: tables
// model-parallel with all-to-all, MLPs data-parallel. Our readings: 13 dense inputs (Criteo,
// as `dlrm`), so the bottom MLP is 13 -> 4096 then 15 x 4096 -> 4096; the interaction is a
// concatenation of the bottom MLP's output and the 64 embedding vectors, 4096 + 64 x 128 =
// 12288 features: the dot interaction of `dlrm` needs the bottom output as wide as an
// embedding vector (4096 != 128), and concatenation is the one FlexFlow's DLRM example
// implements. Top MLP 12288 -> 2048, 7 x 2048 -> 2048, then the 2048 -> 1 click
// probability. Fully connected layers with biases; the tables (64 x 10^7 x 128 = 81.9 G
// parameters) are not layers: only their count and width enter the DAG, through the
// all-to-all.
Model dlrm_topoopt(int batch) {
  const int tables = 64, dim = 128, bottom = 4096, top = 2048, dense_inputs = 13;
  Model m{"topoopt-dlrm", batch, 4, {}, {}};
  for (int i = 0; i < 16; ++i)
    m.layers.push_back(fully_connected(fmt::format("bot_mlp{}", i), i == 0 ? dense_inputs : bottom, bottom, batch));
  const int interaction = bottom + tables * dim;
  for (int i = 0; i < 8; ++i)
    m.layers.push_back(fully_connected(fmt::format("top_mlp{}", i), i == 0 ? interaction : top, top, batch));
  m.layers.push_back(fully_connected("top_mlp8", top, 1, batch));
  m.embeddings = Embeddings{tables, dim, 16};
  return m;
}

LayoutFields layout_fields(const ZooEntry& entry) {
  LayoutFields f;
  const auto at = [&](const char* key, std::string& field) {
    if (const auto it = entry.origin.find(key); it != entry.origin.end()) field = it->second;
  };
  at("tp", f.tp);
  at("mp_npus", f.tp);
  at("dp", f.dp);
  at("pp_stages", f.pp);
  at("pp", f.pp);
  return f;
}

void check_groups_fit(const ZooEntry& entry, const net::Network& network) {
  for (const auto& [key, npus] :
       {std::pair{"mp_npus", entry.parallelism.mp_npus}, std::pair{"ep_npus", entry.parallelism.ep_npus}}) {
    const auto it = entry.origin.find(key);
    if (it != entry.origin.end() && static_cast<std::uint64_t>(npus) > network.num_npus())
      throw InputError(it->second, fmt::format("a group of {} NPUs, but the network ({}) has {}", npus, network.shape(),
                                               network.num_npus()));
  }
}

const std::vector<std::string>& zoo_names() {
  static const std::vector<std::string> names = {"resnet152", "gnmt",           "dlrm",         "transformer-1t",
                                                 "moe",       "topoopt-candle", "topoopt-bert", "topoopt-dlrm"};
  return names;
}

ZooEntry zoo_model(const std::string& name, const std::string& field) { return zoo_model(name, 0, field); }

ZooEntry zoo_model(const std::string& name, int batch, const std::string& field) {
  if (batch < 0) throw InputError(field, fmt::format("batch per NPU must be >= 0 (0: the zoo's), got {}", batch));
  const auto b = [batch](int zoo_batch) { return batch > 0 ? batch : zoo_batch; };
  // Per-NPU mini-batches and parallelism of Themis Sec. 5.2.
  if (name == "resnet152") return {resnet152(b(32)), ParallelismConfig{}, {}};
  if (name == "dlrm") return {dlrm(b(512)), ParallelismConfig{}, {}};
  if (name == "gnmt") return {gnmt(b(128)), ParallelismConfig{}, {}};
  if (name == "moe") {
    ParallelismConfig p;
    p.ep_npus = 128;
    return {moe(b(4)), p, {}};
  }
  if (name == "transformer-1t") {
    ParallelismConfig p;
    p.mp_npus = 128;
    p.zero2 = true;
    p.recompute = true;
    return {transformer_1t(b(16)), p, {}};
  }
  // Per-GPU batches of TopoOpt Table 2, top row.
  if (name == "topoopt-candle") return {candle_uno(b(256)), ParallelismConfig{}, {}};
  if (name == "topoopt-bert") {
    ParallelismConfig p;
    p.mp_npus = 4;  // the four GPUs of a TopoOpt server
    return {bert_topoopt(b(16)), p, {}};
  }
  if (name == "topoopt-dlrm") return {dlrm_topoopt(b(128)), ParallelismConfig{}, {}};
  throw InputError(field, fmt::format("unknown workload '{}'{}; choose one of: {} (or a workload file)", name,
                                      did_you_mean(name, zoo_names()), fmt::join(zoo_names(), ", ")));
}

}  // namespace chorus::workload
