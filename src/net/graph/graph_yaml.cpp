#include "net/graph/graph_yaml.h"

#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/text_file.h"
#include "core/yaml_fields.h"

namespace chorus::net {

using yaml_fields::check_keys;
using yaml_fields::require;
using yaml_fields::scalar;

bool is_fabric_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) || std::filesystem::is_directory(path, ec)) return false;  // a preset name
  const std::string text = read_text_file(path, "the topology file");  // bounded: not /dev/zero whole
  try {
    const YAML::Node doc = YAML::Load(text);
    return doc.IsMap() && doc["fabric"];
  } catch (const YAML::Exception&) {
    return false;
  }
}

GraphNetwork parse_fabric_yaml(const std::string& text, const std::string& source_name) {
  const yaml_fields::Source src{source_name};
  const YAML::Node doc = yaml_fields::load(text, source_name);
  if (!doc.IsMap()) throw InputError(src.at(doc), "expected a map with the key 'fabric'");
  check_keys(src, doc, {"fabric"}, "");
  const YAML::Node f = require(src, doc, "fabric", "");
  if (!f.IsMap()) throw InputError(src.at(f), "field 'fabric' must be a map");
  check_keys(src, f, {"name", "servers", "switches", "degree", "link_gbps", "link_latency_us", "links", "rings"},
             "fabric: ");
  GraphNetwork net;
  net.name = f["name"] ? scalar<std::string>(src, f["name"], "fabric.name", "a string") : source_name;
  net.servers = scalar<int>(src, require(src, f, "servers", "fabric: "), "fabric.servers", "an integer");
  if (net.servers < 1) throw InputError(src.at(f["servers"]), "field 'fabric.servers' must be >= 1");
  net.switches = f["switches"] ? scalar<int>(src, f["switches"], "fabric.switches", "an integer") : 0;
  if (net.switches < 0) throw InputError(src.at(f["switches"]), "field 'fabric.switches' must be >= 0");
  // A node's adjacency, routes and flow state take about 100 bytes.
  require_memory(128.0 * (static_cast<double>(net.servers) + net.switches), source_name + ": fabric.servers",
                 fmt::format("a fabric of {} servers and {} switches", net.servers, net.switches));
  const double gbps =
      scalar<double>(src, require(src, f, "link_gbps", "fabric: "), "fabric.link_gbps", "a number (Gbit/s)");
  const double lat_us = f["link_latency_us"]
                            ? scalar<double>(src, f["link_latency_us"], "fabric.link_latency_us", "a number (us)")
                            : kDefaultHopLatencyNs / 1000.0;
  const YAML::Node links = require(src, f, "links", "fabric: ");
  if (!links.IsSequence()) throw InputError(src.at(links), "field 'fabric.links' must be a list");
  for (std::size_t i = 0; i < links.size(); ++i) {
    const YAML::Node l = links[i];
    const auto field = fmt::format("fabric.links[{}]", i);
    GraphLink link{0, 0, gbps, lat_us * 1000.0};
    if (l.IsSequence()) {
      if (l.size() != 2) throw InputError(src.at(l), fmt::format("field '{}' must be [from, to]", field));
      link.from = scalar<int>(src, l[0], field + "[0]", "an integer (node)");
      link.to = scalar<int>(src, l[1], field + "[1]", "an integer (node)");
    } else if (l.IsMap()) {
      check_keys(src, l, {"from", "to", "gbps", "latency_us"}, field + ": ");
      link.from = scalar<int>(src, require(src, l, "from", field + ": "), field + ".from", "an integer (node)");
      link.to = scalar<int>(src, require(src, l, "to", field + ": "), field + ".to", "an integer (node)");
      if (l["gbps"]) link.gbps = scalar<double>(src, l["gbps"], field + ".gbps", "a number (Gbit/s)");
      if (l["latency_us"])
        link.latency_ns = 1000.0 * scalar<double>(src, l["latency_us"], field + ".latency_us", "a number (us)");
    } else {
      throw InputError(src.at(l), fmt::format("field '{}' must be [from, to] or a map", field));
    }
    net.links.push_back(link);
    // Validate link by link so the error names this link's line.
    GraphNetwork one = net;
    one.links = {link};
    try {
      validate(one, "");
    } catch (const InputError& e) {
      throw InputError(src.at(l), field + ": " + e.detail().substr(e.detail().find(": ") + 2));
    }
  }
  if (const YAML::Node rings = f["rings"]) {
    if (!rings.IsSequence()) throw InputError(src.at(rings), "field 'fabric.rings' must be a list");
    for (std::size_t i = 0; i < rings.size(); ++i) {
      const YAML::Node g = rings[i];
      const auto field = fmt::format("fabric.rings[{}]", i);
      if (!g.IsMap())
        throw InputError(src.at(g), fmt::format("field '{}' must be a map {{servers: [...], orders: [[...]]}}", field));
      check_keys(src, g, {"servers", "orders"}, field + ": ");
      GroupRings gr;
      const YAML::Node servers = require(src, g, "servers", field + ": ");
      if (!servers.IsSequence())
        throw InputError(src.at(servers), fmt::format("field '{}.servers' must be a list", field));
      for (std::size_t k = 0; k < servers.size(); ++k)
        gr.servers.push_back(
            scalar<int>(src, servers[k], fmt::format("{}.servers[{}]", field, k), "an integer (server)"));
      const YAML::Node orders = require(src, g, "orders", field + ": ");
      if (!orders.IsSequence())
        throw InputError(src.at(orders), fmt::format("field '{}.orders' must be a list of lists", field));
      for (std::size_t r = 0; r < orders.size(); ++r) {
        const auto of = fmt::format("{}.orders[{}]", field, r);
        if (!orders[r].IsSequence())
          throw InputError(src.at(orders[r]), fmt::format("field '{}' must be a list of servers", of));
        std::vector<int> order;
        for (std::size_t k = 0; k < orders[r].size(); ++k)
          order.push_back(scalar<int>(src, orders[r][k], fmt::format("{}[{}]", of, k), "an integer (server)"));
        gr.orders.push_back(std::move(order));
      }
      GraphNetwork one;
      one.servers = net.servers;
      one.rings = {gr};
      try {
        validate(one, "");
      } catch (const InputError& e) {
        auto detail = e.detail();  // "rings[0]...: what", for this group alone
        throw InputError(src.at(g), field + detail.substr(std::string("rings[0]").size()));
      }
      net.rings.push_back(std::move(gr));
    }
  }
  if (f["degree"]) {
    const int degree = scalar<int>(src, f["degree"], "fabric.degree", "an integer");
    for (int s = 0; s < net.servers; ++s)
      if (net.out_degree(s) > degree || net.in_degree(s) > degree)
        throw InputError(src.at(f["degree"]), fmt::format("fabric.degree {}: server {} has {} out- and {} in-links",
                                                          degree, s, net.out_degree(s), net.in_degree(s)));
  }
  validate(net, source_name);
  return net;
}

GraphNetwork load_fabric_yaml(const std::string& path) {
  return parse_fabric_yaml(read_text_file(path, "the fabric file"), path);
}

std::string write_fabric_yaml(const GraphNetwork& net) {
  const double gbps = net.links.empty() ? 1.0 : net.links[0].gbps;
  const double lat = net.links.empty() ? kDefaultHopLatencyNs : net.links[0].latency_ns;
  YAML::Emitter out;
  out.SetDoublePrecision(17);
  out << YAML::BeginMap << YAML::Key << "fabric" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << net.name;
  out << YAML::Key << "servers" << YAML::Value << net.servers;
  out << YAML::Key << "switches" << YAML::Value << net.switches;
  out << YAML::Key << "link_gbps" << YAML::Value << gbps;
  out << YAML::Key << "link_latency_us" << YAML::Value << lat / 1000.0;
  out << YAML::Key << "links" << YAML::Value << YAML::BeginSeq;
  for (const auto& l : net.links) {
    if (l.gbps == gbps && l.latency_ns == lat) {
      out << YAML::Flow << YAML::BeginSeq << l.from << l.to << YAML::EndSeq;
    } else {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "from" << YAML::Value << l.from << YAML::Key << "to"
          << YAML::Value << l.to << YAML::Key << "gbps" << YAML::Value << l.gbps << YAML::Key << "latency_us"
          << YAML::Value << l.latency_ns / 1000.0 << YAML::EndMap;
    }
  }
  out << YAML::EndSeq;
  if (!net.rings.empty()) {
    out << YAML::Key << "rings" << YAML::Value << YAML::BeginSeq;
    for (const auto& g : net.rings) {
      out << YAML::BeginMap << YAML::Key << "servers" << YAML::Value << YAML::Flow << g.servers;
      out << YAML::Key << "orders" << YAML::Value << YAML::BeginSeq;
      for (const auto& o : g.orders) out << YAML::Flow << o;
      out << YAML::EndSeq << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace chorus::net
