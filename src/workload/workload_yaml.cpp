#include "workload/workload_yaml.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/text_file.h"
#include "core/suggest.h"
#include "core/yaml_fields.h"

namespace chorus::workload {
namespace {

using Ctx = yaml_fields::Source;
using yaml_fields::check_keys;
using yaml_fields::require;
using yaml_fields::scalar;

double nonneg(const Ctx& ctx, const YAML::Node& node, const std::string& field) {
  const double v = scalar<double>(ctx, node, field, "a number");
  if (!std::isfinite(v) || v < 0)
    throw InputError(ctx.at(node), fmt::format("field '{}' must be >= 0, got {}", field, v));
  return v;
}

int positive_int(const Ctx& ctx, const YAML::Node& node, const std::string& field) {
  const int v = scalar<int>(ctx, node, field, "an integer");
  if (v < 1) throw InputError(ctx.at(node), fmt::format("field '{}' must be >= 1, got {}", field, v));
  return v;
}

}  // namespace

ZooEntry parse_workload_yaml(const std::string& text, const std::string& source_name) {
  Ctx ctx{source_name};
  const YAML::Node root = yaml_fields::load(text, source_name);
  if (!root.IsMap()) throw InputError(source_name, "expected a YAML map with 'batch_per_npu' and 'layers'");
  check_keys(ctx, root, {"name", "batch_per_npu", "bytes_per_element", "parallelism", "embeddings", "layers"}, "");
  ZooEntry e;
  auto& m = e.model;
  m.name = root["name"] ? scalar<std::string>(ctx, root["name"], "name", "a string")
                        : std::filesystem::path(source_name).stem().string();
  m.batch_per_npu = positive_int(ctx, require(ctx, root, "batch_per_npu", ""), "batch_per_npu");
  if (root["bytes_per_element"]) m.bytes_per_element = nonneg(ctx, root["bytes_per_element"], "bytes_per_element");
  if (const auto p = root["parallelism"]) {
    if (!p.IsMap()) throw InputError(ctx.at(p), "field 'parallelism' must be a map");
    const std::string w = "parallelism: ";
    check_keys(ctx, p,
               {"mp_npus", "ep_npus", "tp", "dp", "pp", "zero2", "recompute", "bucket_bytes", "overlap_dp", "pp_stages",
                "microbatches", "pipeline_schedule"},
               w);
    auto& c = e.parallelism;
    for (const char* key : {"mp_npus", "ep_npus", "tp", "dp", "pp", "pp_stages"})
      if (p[key]) e.origin[key] = fmt::format("{}: field 'parallelism.{}'", ctx.at(p[key]), key);
    for (const auto& [one, other] : {std::pair{"tp", "mp_npus"}, std::pair{"pp", "pp_stages"}})
      if (p[one] && p[other])
        throw InputError(ctx.at(p[one]),
                         fmt::format("field 'parallelism.{}': give {} or {}, not both ({} is the exact group, {} "
                                     "the older spelling)",
                                     one, one, other, one, other));
    if (p["mp_npus"]) c.mp_npus = positive_int(ctx, p["mp_npus"], "parallelism.mp_npus");
    if (p["ep_npus"]) c.ep_npus = positive_int(ctx, p["ep_npus"], "parallelism.ep_npus");
    if (p["tp"]) c.tp = positive_int(ctx, p["tp"], "parallelism.tp");
    if (p["dp"]) c.dp = positive_int(ctx, p["dp"], "parallelism.dp");
    if (p["pp"]) c.pp_stages = positive_int(ctx, p["pp"], "parallelism.pp");
    if (p["zero2"]) c.zero2 = scalar<bool>(ctx, p["zero2"], "parallelism.zero2", "true or false");
    if (p["recompute"]) c.recompute = scalar<bool>(ctx, p["recompute"], "parallelism.recompute", "true or false");
    if (p["bucket_bytes"]) c.bucket_bytes = nonneg(ctx, p["bucket_bytes"], "parallelism.bucket_bytes");
    if (p["overlap_dp"]) c.overlap_dp = scalar<bool>(ctx, p["overlap_dp"], "parallelism.overlap_dp", "true or false");
    if (p["pp_stages"]) c.pp_stages = positive_int(ctx, p["pp_stages"], "parallelism.pp_stages");
    if (p["microbatches"]) c.microbatches = positive_int(ctx, p["microbatches"], "parallelism.microbatches");
    if (const auto ps = p["pipeline_schedule"])
      c.pipeline_schedule =
          parse_pipeline_schedule(scalar<std::string>(ctx, ps, "parallelism.pipeline_schedule", "a string"),
                                  ctx.at(ps) + ": field 'parallelism.pipeline_schedule'");
  }
  const YAML::Node layers = require(ctx, root, "layers", "");
  if (!layers.IsSequence() || layers.size() == 0)
    throw InputError(ctx.at(layers), "field 'layers' must be a non-empty list of layers");
  for (size_t i = 0; i < layers.size(); ++i) {
    const YAML::Node l = layers[i];
    const std::string w = fmt::format("layers[{}]: ", i);
    const std::string f = fmt::format("layers[{}].", i);
    if (!l.IsMap()) throw InputError(ctx.at(l), w + "each layer must be a map");
    check_keys(ctx, l,
               {"name", "forward_flops", "params", "input_elements", "output_elements", "mp_all_reduce", "expert"}, w);
    Layer layer;
    layer.name = l["name"] ? scalar<std::string>(ctx, l["name"], f + "name", "a string") : fmt::format("layer{}", i);
    layer.forward_flops = nonneg(ctx, require(ctx, l, "forward_flops", w), f + "forward_flops");
    layer.params = l["params"] ? nonneg(ctx, l["params"], f + "params") : 0;
    layer.input_elements = l["input_elements"] ? nonneg(ctx, l["input_elements"], f + "input_elements") : 0;
    layer.output_elements = l["output_elements"] ? nonneg(ctx, l["output_elements"], f + "output_elements") : 0;
    if (l["mp_all_reduce"])
      layer.mp_all_reduce = scalar<bool>(ctx, l["mp_all_reduce"], f + "mp_all_reduce", "true or false");
    if (l["expert"]) layer.expert = scalar<bool>(ctx, l["expert"], f + "expert", "true or false");
    m.layers.push_back(layer);
  }
  if (const auto emb = root["embeddings"]) {
    if (!emb.IsMap()) throw InputError(ctx.at(emb), "field 'embeddings' must be a map");
    const std::string w = "embeddings: ";
    check_keys(ctx, emb, {"tables", "dim", "top_start"}, w);
    m.embeddings.tables = positive_int(ctx, require(ctx, emb, "tables", w), "embeddings.tables");
    m.embeddings.dim = positive_int(ctx, require(ctx, emb, "dim", w), "embeddings.dim");
    const auto top = require(ctx, emb, "top_start", w);
    m.embeddings.top_start = positive_int(ctx, top, "embeddings.top_start");
    if (m.embeddings.top_start >= static_cast<int>(m.layers.size()))
      throw InputError(ctx.at(top), fmt::format("field 'embeddings.top_start' must name a layer after the first "
                                                "(1..{}), got {}",
                                                m.layers.size() - 1, m.embeddings.top_start));
  }
  return e;
}

ZooEntry load_workload_file(const std::string& path) {
  return parse_workload_yaml(read_text_file(path, "workload file"), path);
}

ZooEntry load_workload(const std::string& name_or_path, const std::string& field) {
  const auto& names = zoo_names();
  if (std::find(names.begin(), names.end(), name_or_path) != names.end()) return zoo_model(name_or_path, field);
  if (std::filesystem::is_regular_file(name_or_path)) return load_workload_file(name_or_path);
  throw InputError(field, fmt::format("'{}' is neither a model zoo name nor a readable workload file{}; zoo: {}",
                                      name_or_path, did_you_mean(name_or_path, names), fmt::join(names, ", ")));
}

}  // namespace chorus::workload
