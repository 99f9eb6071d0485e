#include "net/network_yaml.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/text_file.h"
#include "core/units.h"
#include "core/suggest.h"
#include "core/yaml_fields.h"
#include "net/presets.h"

namespace chorus::net {
namespace {

constexpr double kAstraGBytes = 1024.0 * 1024.0 * 1024.0;  // ASTRA-sim's GB: 2^30 bytes

using Ctx = yaml_fields::Source;
using yaml_fields::check_keys;
using yaml_fields::require;
using yaml_fields::scalar;

Network parse_chorus(const Ctx& ctx, const YAML::Node& root) {
  check_keys(ctx, root, {"name", "dims"}, "");
  Network net;
  net.name = root["name"] ? scalar<std::string>(ctx, root["name"], "name", "a string")
                          : std::filesystem::path(ctx.name).stem().string();
  const YAML::Node dims = require(ctx, root, "dims", "");
  if (!dims.IsSequence() || dims.size() == 0)
    throw InputError(ctx.at(dims), "field 'dims' must be a non-empty list of dimensions");
  for (size_t i = 0; i < dims.size(); ++i) {
    const YAML::Node d = dims[i];
    const std::string where = fmt::format("dims[{}]: ", i);
    if (!d.IsMap()) throw InputError(ctx.at(d), where + "each dimension must be a map");
    check_keys(
        ctx, d,
        {"kind", "size", "link_bandwidth_gbps", "link_bandwidth_GBps", "links_per_npu", "latency_ns", "algorithm"},
        where);
    Dimension dim;
    const auto kind_node = require(ctx, d, "kind", where);
    const auto kind = scalar<std::string>(ctx, kind_node, where + "kind", "a string");
    if (!parse_dim_kind(kind, dim.kind))
      throw InputError(
          ctx.at(kind_node),
          fmt::format("{}field 'kind': unknown kind '{}'; use ring, fully_connected or switch", where, kind));
    dim.size = scalar<int>(ctx, require(ctx, d, "size", where), where + "size", "an integer");
    // The link bandwidth in GB/s (10^9 bytes/s, the unit every output prints) or, the older key,
    // in Gb/s (10^9 bits/s); exactly one of them. Stored in Gb/s.
    if (d["link_bandwidth_GBps"] && d["link_bandwidth_gbps"])
      throw InputError(ctx.at(d["link_bandwidth_gbps"]),
                       where + "give 'link_bandwidth_GBps' (GB/s) or 'link_bandwidth_gbps' (Gb/s), not both");
    if (const auto b = d["link_bandwidth_GBps"]) {
      const double gbytes = scalar<double>(ctx, b, where + "link_bandwidth_GBps", "a number (GB/s)");
      if (!sane_link_gbps(8.0 * gbytes))
        throw InputError(ctx.at(b), fmt::format("{}field 'link_bandwidth_GBps' must be in {:g}..{:g}, got {}", where,
                                                gbps_to_GBps(kMinLinkGbps), gbps_to_GBps(kMaxLinkGbps), gbytes));
      dim.link_bandwidth_gbps = 8.0 * gbytes;
    } else if (d["link_bandwidth_gbps"])
      dim.link_bandwidth_gbps =
          scalar<double>(ctx, d["link_bandwidth_gbps"], where + "link_bandwidth_gbps", "a number (Gb/s)");
    else
      throw InputError(ctx.at(d), where +
                                      "missing field 'link_bandwidth_GBps' (GB/s; or the older "
                                      "'link_bandwidth_gbps' in Gb/s)");
    dim.links_per_npu =
        scalar<int>(ctx, require(ctx, d, "links_per_npu", where), where + "links_per_npu", "an integer");
    dim.latency_ns = scalar<double>(ctx, require(ctx, d, "latency_ns", where), where + "latency_ns", "a number (ns)");
    if (const auto a = d["algorithm"]) {
      const auto name = scalar<std::string>(ctx, a, where + "algorithm", "a string");
      if (!parse_algorithm(name, dim.algorithm))
        throw InputError(
            ctx.at(a),
            fmt::format("{}field 'algorithm': unknown algorithm '{}'{}; use ring, direct, "
                        "halving_doubling or double_binary_tree",
                        where, name, did_you_mean(name, {"ring", "direct", "halving_doubling", "double_binary_tree"})));
    }
    try {
      validate(Network{"", {dim}}, "");
    } catch (const InputError& e) {
      // Re-anchor the message at this dimension's line.
      std::string detail = e.detail();
      throw InputError(ctx.at(d), where + detail);
    }
    net.dims.push_back(dim);
  }
  return net;
}

Network parse_astra(const Ctx& ctx, const YAML::Node& root) {
  check_keys(ctx, root, {"topology", "npus_count", "bandwidth", "latency"}, "ASTRA-sim network: ");
  const char* keys[] = {"topology", "npus_count", "bandwidth", "latency"};
  size_t n = 0;
  for (const char* key : keys) {
    const YAML::Node node = require(ctx, root, key, "ASTRA-sim network: ");
    if (!node.IsSequence() || node.size() == 0)
      throw InputError(ctx.at(node), fmt::format("field '{}' must be a non-empty list, one entry per dimension", key));
    if (n == 0) n = node.size();
    if (node.size() != n)
      throw InputError(ctx.at(node),
                       fmt::format("field '{}' has {} entries but 'topology' has {}", key, node.size(), n));
  }
  Network net;
  net.name = std::filesystem::path(ctx.name).stem().string();
  for (size_t i = 0; i < n; ++i) {
    Dimension dim;
    const auto kind_node = root["topology"][i];
    const auto kind = scalar<std::string>(ctx, kind_node, fmt::format("topology[{}]", i), "a string");
    if (!parse_dim_kind(kind, dim.kind))
      throw InputError(
          ctx.at(kind_node),
          fmt::format("field 'topology[{}]': unknown topology '{}'; use Ring, FullyConnected or Switch", i, kind));
    dim.size = scalar<int>(ctx, root["npus_count"][i], fmt::format("npus_count[{}]", i), "an integer");
    // ASTRA-sim's meaning (its analytical backend): `bandwidth` is GB/s with 1 GB = 2^30 bytes, the
    // bandwidth of every message (congestion-unaware: messages sent at once do not share it); a
    // fully connected NPU has a link to each of its P-1 peers; `latency` is per hop and a switch
    // dimension's messages take two hops (NPU to switch, switch to NPU).
    const double gbytes = scalar<double>(ctx, root["bandwidth"][i], fmt::format("bandwidth[{}]", i), "a number (GB/s)");
    dim.link_bandwidth_gbps = gbytes * kAstraGBytes / 1e9 * 8.0;
    dim.links_per_npu = dim.kind == DimKind::kFullyConnected ? std::max(dim.size - 1, 1) : 1;
    dim.per_message_bandwidth = true;
    const double latency = scalar<double>(ctx, root["latency"][i], fmt::format("latency[{}]", i), "a number (ns)");
    dim.latency_ns = dim.kind == DimKind::kSwitch ? 2 * latency : latency;
    // A switch of any size: halving-doubling where the size is a power of two, else ring.
    if (dim.kind == DimKind::kSwitch && dim.size > 0 && (dim.size & (dim.size - 1)) != 0)
      dim.algorithm = Algorithm::kRing;
    try {
      validate(Network{"", {dim}}, "");
    } catch (const InputError& e) {
      throw InputError(ctx.at(root["topology"][i]), fmt::format("dimension {}: {}", i, e.detail()));
    }
    net.dims.push_back(dim);
  }
  return net;
}

}  // namespace

Network parse_network_yaml(const std::string& text, const std::string& source_name) {
  Ctx ctx{source_name};
  const YAML::Node root = yaml_fields::load(text, source_name);
  if (!root.IsMap()) throw InputError(source_name, "expected a YAML map with 'dims' (or ASTRA-sim's 'topology')");
  try {
    Network net = root["topology"] ? parse_astra(ctx, root) : parse_chorus(ctx, root);
    validate(net, source_name);
    return net;
  } catch (const YAML::Exception& e) {
    throw yaml_fields::structure_error(e, source_name);
  }
}

Network load_network_file(const std::string& path) {
  return parse_network_yaml(read_text_file(path, "network file"), path);
}

Network load_network(const std::string& name_or_path) {
  if (auto preset = find_preset(name_or_path)) return *preset;
  if (std::filesystem::exists(name_or_path)) return load_network_file(name_or_path);
  const auto names = preset_names();
  throw InputError("topology", fmt::format("'{}' is neither a preset nor a readable file{}; presets: {}", name_or_path,
                                           did_you_mean(name_or_path, names), fmt::join(names, ", ")));
}

}  // namespace chorus::net
