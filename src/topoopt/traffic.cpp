#include "topoopt/traffic.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/text_file.h"
#include "topoopt/dag_traffic.h"
#include "workload/zoo.h"

namespace chorus::topoopt {
namespace {

using json = nlohmann::json;

int server_at(const json& v, int servers, const std::string& where) {
  if (!v.is_number_integer()) throw InputError(where, fmt::format("a server is an integer, got {}", v.dump()));
  const auto s = v.get<long long>();
  if (s < 0 || s >= servers) throw InputError(where, fmt::format("server {} is outside 0..{}", s, servers - 1));
  return static_cast<int>(s);
}

double bytes_at(const json& v, const std::string& where) {
  if (!v.is_number()) throw InputError(where, fmt::format("bytes must be a number, got {}", v.dump()));
  const double b = v.get<double>();
  if (!std::isfinite(b) || b < 0)
    throw InputError(where, fmt::format("bytes must be finite and >= 0, got {}", v.dump()));
  return b;
}

}  // namespace

double allreduce_wire_bytes(const AllReduceGroup& group) {
  const auto n = static_cast<double>(group.servers.size());
  return n < 2 ? 0.0 : 2.0 * (n - 1.0) * group.bytes;
}

Traffic parse_traffic_json(const std::string& text, int servers, const std::string& source) {
  if (servers < 2) throw InputError("servers", fmt::format("a fabric needs at least 2 servers, got {}", servers));
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(source, fmt::format("invalid JSON: {}", e.what()));
  }
  if (!j.is_object())
    throw InputError(source, "the traffic file is a JSON object {\"allreduce_groups\": [...], \"mp\": [...]}");
  for (const auto& [key, value] : j.items())
    if (key != "allreduce_groups" && key != "mp")
      throw InputError(source, fmt::format("unknown field '{}' (fields: allreduce_groups, mp)", key));
  Traffic t;
  t.servers = servers;
  if (j.contains("allreduce_groups")) {
    const auto& groups = j.at("allreduce_groups");
    if (!groups.is_array())
      throw InputError(source + ": allreduce_groups", "must be a list of {\"servers\": [...], \"bytes\": B}");
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const std::string where = fmt::format("{}: allreduce_groups[{}]", source, g);
      const auto& e = groups[g];
      if (!e.is_object()) throw InputError(where, "must be {\"servers\": [...], \"bytes\": B}");
      for (const auto& [key, value] : e.items())
        if (key != "servers" && key != "bytes")
          throw InputError(where, fmt::format("unknown field '{}' (fields: servers, bytes)", key));
      if (!e.contains("servers") || !e.at("servers").is_array())
        throw InputError(where, "field 'servers' (a list) is missing");
      if (!e.contains("bytes")) throw InputError(where, "field 'bytes' is missing");
      AllReduceGroup group;
      std::set<int> seen;
      const auto& list = e.at("servers");
      for (std::size_t k = 0; k < list.size(); ++k) {
        const std::string at = fmt::format("{}.servers[{}]", where, k);
        const int s = server_at(list[k], servers, at);
        if (!seen.insert(s).second) throw InputError(at, fmt::format("server {} is listed twice", s));
        group.servers.push_back(s);
      }
      if (group.servers.size() < 2) throw InputError(where + ".servers", "an AllReduce group has at least 2 servers");
      group.bytes = bytes_at(e.at("bytes"), where + ".bytes");
      t.allreduce_groups.push_back(std::move(group));
    }
  }
  if (j.contains("mp")) {
    const auto& mp = j.at("mp");
    if (!mp.is_array()) throw InputError(source + ": mp", "must be a list of [src, dst, bytes]");
    for (std::size_t i = 0; i < mp.size(); ++i) {
      const std::string where = fmt::format("{}: mp[{}]", source, i);
      const auto& e = mp[i];
      if (!e.is_array() || e.size() != 3)
        throw InputError(where, fmt::format("must be [src, dst, bytes], got {}", e.dump()));
      MpTransfer m{server_at(e[0], servers, where + "[0]"), server_at(e[1], servers, where + "[1]"),
                   bytes_at(e[2], where + "[2]")};
      if (m.src == m.dst) throw InputError(where, fmt::format("src and dst are both server {}", m.src));
      t.mp.push_back(m);
    }
  }
  return t;
}

Traffic load_traffic_file(const std::string& path, int servers) {
  return parse_traffic_json(read_text_file(path, "the traffic file"), servers, path);
}

Traffic dlrm_example() {
  constexpr int kServers = 16;
  constexpr double kGB = 1e9, kMB = 1e6;
  Traffic t;
  t.servers = kServers;
  AllReduceGroup all;
  for (int s = 0; s < kServers; ++s) all.servers.push_back(s);
  all.bytes = 4 * kGB;
  t.allreduce_groups.push_back(all);
  for (int e : {0, 3, 8, 13})
    for (int s = 0; s < kServers; ++s)
      if (s != e) {
        t.mp.push_back({e, s, 32 * kMB});  // embeddings to every server (forward)
        t.mp.push_back({s, e, 32 * kMB});  // their gradients back (backward)
      }
  return t;
}

std::vector<std::string> builtin_traffic_names() {
  std::vector<std::string> names = {"dlrm-example"};
  for (const auto& z : workload::zoo_names()) names.push_back(z);
  return names;
}

Traffic builtin_traffic(const std::string& name, int servers) {
  if (name == "dlrm-example") {
    auto t = dlrm_example();
    if (servers != 0 && servers != t.servers)
      throw InputError("servers",
                       fmt::format("dlrm-example is the {}-server example of Sec. 2.2, got {}", t.servers, servers));
    return t;
  }
  const auto& zoo = workload::zoo_names();
  if (std::find(zoo.begin(), zoo.end(), name) == zoo.end())
    throw InputError("workload", fmt::format("unknown traffic '{}' (built in: {}; others from a traffic file)", name,
                                             fmt::join(builtin_traffic_names(), ", ")));
  if (servers == 0) throw InputError("servers", fmt::format("required with the zoo workload '{}'", name));
  return zoo_traffic(name, servers);
}

}  // namespace chorus::topoopt
