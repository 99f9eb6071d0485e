// chorus topo totient | chorus topo routes — TopoOpt's building blocks (docs/topoopt.md).
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/chorus/commands.h"
#include "apps/chorus/topo_run.h"
#include "core/error.h"
#include "core/text_file.h"
#include "core/units.h"
#include "net/graph/fabrics.h"
#include "net/graph/graph_yaml.h"
#include "core/split.h"
#include "eval/topoopt_fabrics.h"
#include "topoopt/coin_change_mod.h"
#include "topoopt/cost_model.h"
#include "topoopt/topology_finder.h"
#include "topoopt/totient_perms.h"

namespace chorus::cli {

void register_topo_commands(CLI::App& app) {
  auto* topo = app.add_subcommand("topo", "TopoOpt: topologies for direct-connect fabrics (docs/topoopt.md)");
  topo->require_subcommand(1);

  struct TotientArgs {
    int n = 12;
    bool primes = false;
    bool json = false;
  };
  static TotientArgs t;
  auto* totient = topo->add_subcommand(
      "totient", "The ring-AllReduce permutations of n servers: generators p with gcd(p, n) = 1 (TotientPerms)");
  totient->add_option("--n", t.n, "Servers in the AllReduce group")->capture_default_str();
  totient->add_flag("--primes", t.primes, "Only 1 and prime generators (the paper's restriction for very large n)");
  totient->add_flag("--json", t.json, "Print {\"n\": N, \"generators\": [...]}");
  totient->callback([] {
    if (t.n < 1 || t.n > 1000000) throw InputError("--n", fmt::format("must be in 1..1000000, got {}", t.n));
    const auto g = topoopt::totient_generators(t.n, t.primes);
    if (t.json) {
      fmt::print("{}\n", nlohmann::json{{"n", t.n}, {"generators", g}}.dump());
      return;
    }
    fmt::print("{} ring permutations of {} servers (server i -> i + p mod {}): p = {}\n", g.size(), t.n, t.n,
               fmt::join(g, ", "));
  });

  struct RoutesArgs {
    int n = 12;
    std::string coins = "1";
    bool json = false;
  };
  static RoutesArgs r;
  auto* routes = topo->add_subcommand("routes", "Fewest-hop routes over a union of regular rings (CoinChangeMod)");
  routes->add_option("--n", r.n, "Servers in the group")->capture_default_str();
  routes->add_option("--coins", r.coins, "The rings' generators, e.g. 1,5")->capture_default_str();
  routes->add_flag("--json", r.json, "Print {\"n\", \"coins\", \"routes\": [{\"distance\", \"hops\", \"coins\"}]}");
  routes->callback([] {
    if (r.n < 1 || r.n > 1000000) throw InputError("--n", fmt::format("must be in 1..1000000, got {}", r.n));
    std::vector<int> coins;
    for (const auto& c : split_list(r.coins)) {
      std::size_t used = 0;
      int v = 0;
      try {
        v = std::stoi(c, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != c.size() || c.empty()) throw InputError("--coins", fmt::format("'{}' is not an integer", c));
      coins.push_back(v);
    }
    const auto cr = topoopt::coin_change_mod(r.n, coins);
    if (r.json) {
      nlohmann::json j{{"n", r.n}, {"coins", cr.coins}, {"routes", nlohmann::json::array()}};
      for (int d = 1; d < r.n; ++d)
        j["routes"].push_back({{"distance", d},
                               {"hops", cr.hops[static_cast<std::size_t>(d)]},
                               {"coins", cr.route[static_cast<std::size_t>(d)]}});
      fmt::print("{}\n", j.dump());
      return;
    }
    fmt::print("{:>8} {:>5}  coins\n", "distance", "hops");
    for (int d = 1; d < r.n; ++d) {
      const int h = cr.hops[static_cast<std::size_t>(d)];
      fmt::print("{:>8} {:>5}  {}\n", d, h < 0 ? std::string("-") : std::to_string(h),
                 fmt::join(cr.route[static_cast<std::size_t>(d)], " + "));
    }
  });
  static TopoFindArgs f;
  auto* find = topo->add_subcommand("find",
                                    "TopologyFinder (Algorithm 1): a direct-connect topology and routing for a job's "
                                    "AllReduce and model-parallel traffic");
  find->add_option("--servers", f.servers,
                   "Servers (default: dlrm-example's 16; required with --traffic and zoo workloads)");
  find->add_option("--degree", f.degree, "Interfaces per server, d")->capture_default_str();
  auto* w = find->add_option("--workload", f.workload,
                             "Built-in traffic: dlrm-example (Sec. 2.2: 16 servers, E0..E3 on S0, S3, S8, S13), or a "
                             "zoo workload's first iteration (resnet152, gnmt, dlrm, transformer-1t, moe, "
                             "topoopt-candle, topoopt-bert, topoopt-dlrm; needs --servers)");
  auto* tr = find->add_option(
      "--traffic", f.traffic,
      "Traffic file: {\"allreduce_groups\": [{\"servers\": [..], \"bytes\": B}], \"mp\": [[src, dst, bytes], ...]}");
  w->excludes(tr);
  find->add_flag("--primes", f.primes, "TotientPerms candidates: only 1 and primes (large groups)");
  find->add_flag("--json", f.json, "Print the topology as JSON (edges, routes, mp_hops, satisfied demand)");
  find->add_option("--save", f.save,
                   "Also write the topology as a fabric YAML (docs/graph-networks.md) for the flow-level model");
  find->add_option("--bandwidth", f.bandwidth, "With --save: Gb/s per interface")->capture_default_str();
  find->callback([] {
    const auto found = find_topology(f);
    if (!f.save.empty()) {
      auto fabric = topoopt::topology_fabric(found, f.bandwidth);
      fabric.name = fmt::format("topoopt-{}-d{}", f.workload.empty() ? "traffic" : f.workload, found.degree);
      write_text_file(f.save, net::write_fabric_yaml(fabric));
      if (!f.json)
        fmt::print("wrote {} (fabric YAML, {} links of {} Gb/s)\n", f.save, fabric.links.size(), f.bandwidth);
    }
    if (f.json) {
      fmt::print("{}\n", topology_json(found).dump());
      return;
    }
    fmt::print("{} servers, degree {}: {} for AllReduce, {} for model parallelism; {} directed links\n", found.servers,
               found.degree, found.degree_allreduce, found.degree_mp, found.edges.size());
    for (const auto& g : found.allreduce)
      fmt::print("  {} ({} servers): rings p = {}; at most {} hops between members; {:.4g} MP bytes on their links\n",
                 g.group < 0 ? std::string("connectivity ring") : fmt::format("AllReduce group {}", g.group),
                 g.servers.size(), fmt::join(g.generators, ", "), g.max_hops, g.mp_satisfied_bytes);
    for (std::size_t i = 0; i < found.matchings.size(); ++i)
      fmt::print("  matching {}: {} server pairs\n", i + 1, found.matchings[i].size());
    int max_hops = 0;
    for (const auto& route : found.mp_routes) max_hops = std::max(max_hops, route.hops());
    fmt::print(
        "model-parallel: {} transfers, {:.4g} bytes, {:.1f}% on a direct link, {:.3f} hops per byte on average, at "
        "most {} hops\n",
        found.mp_routes.size(), found.mp_bytes,
        found.mp_bytes > 0 ? 100.0 * found.mp_direct_bytes / found.mp_bytes : 100.0,
        found.mp_bytes > 0 ? found.mp_byte_hops / found.mp_bytes : 0.0, max_hops);
  });
  struct FabricArgs {
    std::string fabric;
    int servers = 16;
    int degree = 4;
    double bandwidth = 100;
    std::uint64_t seed = 1;
    std::string save;
  };
  static FabricArgs fa;
  auto* fab = topo->add_subcommand(
      "fabric",
      "Write a comparison fabric of Sec. 5.1 as a fabric YAML, for `chorus sim workload --topology` "
      "(TopoOpt's own: `chorus topo find --save`)");
  fab->add_option("--fabric", fa.fabric, "ideal-fat-tree, cost-equivalent-fat-tree, oversub-fat-tree, expander, sip-ml")
      ->required();
  fab->add_option("--servers", fa.servers, "Servers")->capture_default_str();
  fab->add_option("--degree", fa.degree, "Interfaces per server, d")->capture_default_str();
  fab->add_option("--bandwidth", fa.bandwidth,
                  "Gb/s per interface, B (the cost-equivalent Fat-tree: 10, 25, 40, 100 or 200)")
      ->capture_default_str();
  fab->add_option("--seed", fa.seed, "The expander's seed")->capture_default_str();
  fab->add_option("--save", fa.save, "Fabric YAML to write")->required();
  fab->callback([] {
    if (fa.servers < 2 || fa.servers > 100000)
      throw InputError("--servers", fmt::format("must be in 2..100000, got {}", fa.servers));
    if (fa.degree < 1 || fa.degree > 1024)
      throw InputError("--degree", fmt::format("must be in 1..1024, got {}", fa.degree));
    if (!(fa.bandwidth > 0) || !std::isfinite(fa.bandwidth))
      throw InputError("--bandwidth", fmt::format("must be > 0, got {}", fa.bandwidth));
    if (fa.fabric == "topoopt-oneshot" || fa.fabric == "topoopt-reconfig")
      throw InputError("--fabric",
                       "TopoOpt's fabrics depend on the job: use `chorus topo find --workload W --servers N --save F` "
                       "(TopoOpt-reconfig's circuits are re-planned while it runs: `chorus reproduce topoopt`)");
    topoopt::Traffic none;
    none.servers = fa.servers;
    auto built = eval::job_fabric(fa.fabric, fa.servers, fa.degree, fa.bandwidth, none, fa.seed);
    if (built.reconfiguration) {
      // SiP-ML re-allocates its wavelengths while it runs; a file holds its starting ring.
      const auto name = built.graph.name;
      built.graph = net::sipml_ring(fa.servers, fa.degree, fa.bandwidth);
      built.graph.name = name + "-ring";
      fmt::print(
          "note: SiP-ML re-allocates its wavelengths while a job runs (`chorus reproduce topoopt`); "
          "the file holds its starting physical ring\n");
    }
    write_text_file(fa.save, net::write_fabric_yaml(built.graph));
    fmt::print("wrote {} ({}: {} servers, {} switches, {} links, {} Gb/s per server)\n", fa.save, built.graph.name,
               built.graph.servers, built.graph.switches, built.graph.links.size(), built.server_gbps);
  });
  static TopoCostArgs c;
  auto* cost =
      topo->add_subcommand("cost", "What a fabric costs (Sec. 5.2, Table 3 prices; the model is in docs/topoopt.md)");
  cost->add_option("--fabric", c.fabric,
                   "ideal-fat-tree, cost-equivalent-fat-tree, oversub-fat-tree, expander, topoopt-oneshot, "
                   "topoopt-reconfig, or all")
      ->capture_default_str();
  cost->add_option("--servers", c.servers, "Servers")->capture_default_str();
  cost->add_option("--degree", c.degree, "Interfaces per server, d")->capture_default_str();
  cost->add_option("--bandwidth", c.bandwidth, "Gb/s per interface, B: 10, 25, 40, 100 or 200 (Table 3)")
      ->capture_default_str();
  cost->add_option("--switch-radix", c.radix, "Ports per electrical switch (Fat-tree tiers)")->capture_default_str();
  cost->add_flag(
      "--json", c.json,
      "Print a list of {fabric, servers, degree, bandwidth_gbps, server_gbps, tiers, cost_usd, nic_usd, parts}");
  cost->callback([] {
    const auto j = fabric_costs_json(c);
    if (!c.json) {
      fmt::print("{:<26} {:>14} {:>12} {:>12} {:>12} {:>6}\n", "fabric", "interconnect $", "NICs $", "total $",
                 "Gb/s/server", "tiers");
      for (const auto& fc : j) {
        const double interconnect = fc["cost_usd"], nic = fc["nic_usd"], server_gbps = fc["server_gbps"];
        fmt::print("{:<26} {:>14} {:>12} {:>12} {:>12} {:>6}\n", fc["fabric"].get<std::string>(),
                   group_digits(interconnect), group_digits(nic), group_digits(interconnect + nic), server_gbps,
                   fc["tiers"].get<int>());
      }
    }
    if (c.json)
      fmt::print("{}\n", j.dump());
    else
      fmt::print(
          "interconnect $: switches, transceivers, patch panels or OCS ports and fibres (Sec. 5.2, Table 3); NICs $: "
          "the servers' NICs at the fabric's Gb/s per server; total $ = interconnect + NICs\n");
  });
  register_topo_optimize_command(*topo);
}

}  // namespace chorus::cli
