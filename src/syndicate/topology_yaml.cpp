#include "syndicate/topology_yaml.h"

#include "coll/motif/motif.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/text_file.h"
#include "core/suggest.h"
#include "core/yaml_fields.h"

namespace chorus::syndicate {
namespace {

using Ctx = yaml_fields::Source;
using yaml_fields::check_keys;
using yaml_fields::require;
using yaml_fields::scalar;

YAML::Node require_list(const Ctx& ctx, const YAML::Node& root, const std::string& key) {
  const YAML::Node list = require(ctx, root, key, "");
  if (!list.IsSequence() || list.size() == 0)
    throw InputError(ctx.at(list), fmt::format("field '{}' must be a non-empty list", key));
  return list;
}

Topology parse(const Ctx& ctx, const YAML::Node& root) {
  check_keys(ctx, root, {"name", "dims", "channels", "paths", "costs", "compute"}, "");
  Topology t;
  t.name = root["name"] ? scalar<std::string>(ctx, root["name"], "name", "a string")
                        : std::filesystem::path(ctx.name).stem().string();
  const YAML::Node dims = require_list(ctx, root, "dims");
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const auto where = fmt::format("dims[{}]: ", i);
    check_keys(ctx, dims[i], {"name", "size"}, where);
    const int size = scalar<int>(ctx, require(ctx, dims[i], "size", where), where + "size", "an integer");
    if (size < 1)
      throw InputError(ctx.at(dims[i]["size"]), fmt::format("field '{}size' must be >= 1, got {}", where, size));
    t.dims.push_back(size);
    t.dim_names.push_back(dims[i]["name"] ? scalar<std::string>(ctx, dims[i]["name"], where + "name", "a string")
                                          : fmt::format("dim{}", i));
  }
  const YAML::Node channels = require_list(ctx, root, "channels");
  for (std::size_t i = 0; i < channels.size(); ++i) {
    const auto where = fmt::format("channels[{}]: ", i);
    const YAML::Node c = channels[i];
    check_keys(ctx, c, {"name", "dim", "bandwidth_gbps", "latency_ns", "incast_penalty", "backends"}, where);
    Channel ch;
    ch.name = scalar<std::string>(ctx, require(ctx, c, "name", where), where + "name", "a string");
    ch.dim = scalar<int>(ctx, require(ctx, c, "dim", where), where + "dim", "an integer");
    if (ch.dim < 0 || ch.dim >= static_cast<int>(t.dims.size()))
      throw InputError(ctx.at(c["dim"]),
                       fmt::format("field '{}dim': {} is not a dimension (0..{})", where, ch.dim, t.dims.size() - 1));
    ch.bandwidth_gbps =
        scalar<double>(ctx, require(ctx, c, "bandwidth_gbps", where), where + "bandwidth_gbps", "a number (Gb/s)");
    if (!(ch.bandwidth_gbps > 0))
      throw InputError(ctx.at(c["bandwidth_gbps"]), fmt::format("field '{}bandwidth_gbps' must be > 0", where));
    ch.latency_ns = c["latency_ns"] ? scalar<double>(ctx, c["latency_ns"], where + "latency_ns", "a number (ns)") : 0.0;
    if (!(ch.latency_ns >= 0))
      throw InputError(ctx.at(c["latency_ns"]), fmt::format("field '{}latency_ns' must be >= 0", where));
    if (c["incast_penalty"]) {
      ch.incast_penalty = scalar<double>(ctx, c["incast_penalty"], where + "incast_penalty", "a number");
      if (!(ch.incast_penalty >= 0) || !std::isfinite(ch.incast_penalty))
        throw InputError(ctx.at(c["incast_penalty"]), fmt::format("field '{}incast_penalty' must be >= 0", where));
    }
    if (c["backends"]) {
      if (!c["backends"].IsSequence())
        throw InputError(ctx.at(c["backends"]), fmt::format("field '{}backends' must be a list", where));
      for (const auto& b : c["backends"])
        ch.backends.push_back(scalar<std::string>(ctx, b, where + "backends", "a string"));
    }
    if (t.channel_index(ch.name) >= 0)
      throw InputError(ctx.at(c), fmt::format("{}duplicate channel name '{}'", where, ch.name));
    t.channels.push_back(ch);
  }
  std::vector<std::string> channel_names;
  for (const auto& c : t.channels) channel_names.push_back(c.name);
  const YAML::Node paths = require_list(ctx, root, "paths");
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const auto where = fmt::format("paths[{}]: ", i);
    const YAML::Node p = paths[i];
    check_keys(ctx, p, {"name", "channels"}, where);
    Path path;
    path.name = scalar<std::string>(ctx, require(ctx, p, "name", where), where + "name", "a string");
    const YAML::Node list = require(ctx, p, "channels", where);
    if (!list.IsSequence() || list.size() != t.dims.size())
      throw InputError(ctx.at(list), fmt::format("field '{}channels' must list one channel per dimension ({})", where,
                                                 t.dims.size()));
    for (std::size_t d = 0; d < list.size(); ++d) {
      const auto name = scalar<std::string>(ctx, list[d], where + "channels", "a channel name");
      const int c = t.channel_index(name);
      if (c < 0)
        throw InputError(ctx.at(list[d]), fmt::format("field '{}channels': unknown channel '{}'{}", where, name,
                                                      did_you_mean(name, channel_names)));
      if (t.channels[c].dim != static_cast<int>(d))
        throw InputError(ctx.at(list[d]), fmt::format("field '{}channels': '{}' is on dim {}, listed for dim {}", where,
                                                      name, t.channels[c].dim, d));
      path.channels.push_back(c);
    }
    t.paths.push_back(path);
  }
  if (root["costs"]) {
    const YAML::Node costs = root["costs"];
    if (!costs.IsSequence()) throw InputError(ctx.at(costs), "field 'costs' must be a list");
    for (std::size_t i = 0; i < costs.size(); ++i) {
      const auto where = fmt::format("costs[{}]: ", i);
      const YAML::Node e = costs[i];
      check_keys(ctx, e, {"kind", "algorithm", "path", "latency_ns", "bandwidth_gbps"}, where);
      CostEntry row;
      const YAML::Node kind = require(ctx, e, "kind", where);
      const auto kind_name = scalar<std::string>(ctx, kind, where + "kind", "a string");
      if (!coll::motif::parse_kind(kind_name, row.kind) || !coll::motif::is_comm_op(row.kind))
        throw InputError(ctx.at(kind), fmt::format("field '{}kind': '{}' is not a comm-op (all_reduce, all_to_all, "
                                                   "broadcast)",
                                                   where, kind_name));
      row.algorithm = scalar<std::string>(ctx, require(ctx, e, "algorithm", where), where + "algorithm", "a string");
      row.path = scalar<std::string>(ctx, require(ctx, e, "path", where), where + "path", "a string");
      if (t.path_index(row.path) < 0)
        throw InputError(ctx.at(e["path"]), fmt::format("field '{}path': unknown path '{}'", where, row.path));
      row.latency_ns = scalar<double>(ctx, require(ctx, e, "latency_ns", where), where + "latency_ns", "a number (ns)");
      row.bandwidth_gbps = e["bandwidth_gbps"]
                               ? scalar<double>(ctx, e["bandwidth_gbps"], where + "bandwidth_gbps", "a number (Gb/s)")
                               : 0.0;
      t.costs.push_back(row);
    }
  }
  if (root["compute"]) {
    const YAML::Node c = root["compute"];
    check_keys(ctx, c, {"peak_tflops", "memory_bandwidth_gbs"}, "compute: ");
    if (c["peak_tflops"])
      t.compute.peak_tflops = scalar<double>(ctx, c["peak_tflops"], "compute.peak_tflops", "a number");
    if (c["memory_bandwidth_gbs"])
      t.compute.memory_bandwidth_gbs =
          scalar<double>(ctx, c["memory_bandwidth_gbs"], "compute.memory_bandwidth_gbs", "a number");
  }
  return t;
}

}  // namespace

Topology parse_topology_yaml(const std::string& text, const std::string& source_name) {
  Ctx ctx{source_name};
  const YAML::Node root = yaml_fields::load(text, source_name);
  if (!root.IsMap()) throw InputError(source_name, "expected a YAML map with 'dims', 'channels' and 'paths'");
  try {
    Topology t = parse(ctx, root);
    validate(t, source_name);
    return t;
  } catch (const YAML::Exception& e) {
    throw yaml_fields::structure_error(e, source_name);
  }
}

Topology read_topology_yaml(const std::string& path) {
  return parse_topology_yaml(read_text_file(path, "topology file"), path);
}

std::string topology_yaml(const Topology& t, const std::vector<std::string>& comment) {
  YAML::Emitter e;
  e.SetDoublePrecision(10);
  e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << t.name;
  e << YAML::Key << "dims" << YAML::Value << YAML::BeginSeq;
  for (std::size_t d = 0; d < t.dims.size(); ++d)
    e << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << t.dim_names[d] << YAML::Key << "size"
      << YAML::Value << t.dims[d] << YAML::EndMap;
  e << YAML::EndSeq << YAML::Key << "channels" << YAML::Value << YAML::BeginSeq;
  for (const auto& c : t.channels) {
    e << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << c.name << YAML::Key << "dim"
      << YAML::Value << c.dim << YAML::Key << "bandwidth_gbps" << YAML::Value << c.bandwidth_gbps << YAML::Key
      << "latency_ns" << YAML::Value << c.latency_ns;
    if (c.incast_penalty > 0) e << YAML::Key << "incast_penalty" << YAML::Value << c.incast_penalty;
    e << YAML::Key << "backends" << YAML::Value << YAML::Flow << c.backends << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::Key << "paths" << YAML::Value << YAML::BeginSeq;
  for (const auto& p : t.paths) {
    std::vector<std::string> names;
    for (int c : p.channels) names.push_back(t.channels[static_cast<std::size_t>(c)].name);
    e << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << p.name << YAML::Key << "channels"
      << YAML::Value << YAML::Flow << names << YAML::EndMap;
  }
  e << YAML::EndSeq;
  if (!t.costs.empty()) {
    e << YAML::Key << "costs" << YAML::Value << YAML::BeginSeq;
    for (const auto& r : t.costs)
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "kind" << YAML::Value << std::string(to_string(r.kind))
        << YAML::Key << "algorithm" << YAML::Value << r.algorithm << YAML::Key << "path" << YAML::Value << r.path
        << YAML::Key << "latency_ns" << YAML::Value << r.latency_ns << YAML::Key << "bandwidth_gbps" << YAML::Value
        << r.bandwidth_gbps << YAML::EndMap;
    e << YAML::EndSeq;
  }
  e << YAML::Key << "compute" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "peak_tflops"
    << YAML::Value << t.compute.peak_tflops << YAML::Key << "memory_bandwidth_gbs" << YAML::Value
    << t.compute.memory_bandwidth_gbs << YAML::EndMap;
  e << YAML::EndMap;
  std::string out;
  for (const auto& line : comment) out += "# " + line + "\n";
  return out + e.c_str() + "\n";
}

}  // namespace chorus::syndicate
