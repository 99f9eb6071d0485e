// chorus topo totient | chorus topo routes — TopoOpt's building blocks (docs/topoopt.md).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/chorus/commands.h"
#include "core/error.h"
#include "core/split.h"
#include "topoopt/coin_change_mod.h"
#include "topoopt/totient_perms.h"

namespace chorus::cli {

void register_topo_commands(CLI::App& app) {
  auto* topo = app.add_subcommand("topo", "TopoOpt: topologies for direct-connect fabrics (building blocks so far)");
  topo->require_subcommand(1);

  struct TotientArgs {
    int n = 12;
    bool primes = false;
    bool json = false;
  };
  static TotientArgs t;
  auto* totient = topo->add_subcommand("totient", "The ring-AllReduce permutations of n servers: generators p with gcd(p, n) = 1 (TotientPerms)");
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
    fmt::print("{} ring permutations of {} servers (server i -> i + p mod {}): p = {}\n", g.size(), t.n, t.n, fmt::join(g, ", "));
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
        j["routes"].push_back({{"distance", d}, {"hops", cr.hops[static_cast<std::size_t>(d)]}, {"coins", cr.route[static_cast<std::size_t>(d)]}});
      fmt::print("{}\n", j.dump());
      return;
    }
    fmt::print("{:>8} {:>5}  coins\n", "distance", "hops");
    for (int d = 1; d < r.n; ++d) {
      const int h = cr.hops[static_cast<std::size_t>(d)];
      fmt::print("{:>8} {:>5}  {}\n", d, h < 0 ? std::string("-") : std::to_string(h), fmt::join(cr.route[static_cast<std::size_t>(d)], " + "));
    }
  });
}

}  // namespace chorus::cli
