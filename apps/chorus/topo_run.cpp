#include "apps/chorus/topo_run.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/error.h"
#include "core/memory_budget.h"
#include "topoopt/cost_model.h"
#include "workload/parallelism.h"

namespace chorus::cli {

topoopt::Topology find_topology(const TopoFindArgs& a) {
  if (a.workload.empty() == a.traffic.empty())
    throw InputError("--workload", "give a built-in workload (--workload NAME) or a traffic file (--traffic FILE)");
  if (!a.traffic.empty() && a.servers == 0) throw InputError("--servers", "required with --traffic");
  if (a.servers < 0 || a.servers > 100000)
    throw InputError("--servers", fmt::format("must be in 2..100000, got {}", a.servers));
  if (a.degree < 1 || a.degree > 1024)
    throw InputError("--degree", fmt::format("must be in 1..1024, got {}", a.degree));
  const auto traffic = a.traffic.empty() ? topoopt::builtin_traffic(a.workload, a.servers)
                                         : topoopt::load_traffic_file(a.traffic, a.servers);
  if (!(a.bandwidth > 0) || !std::isfinite(a.bandwidth))
    throw InputError("--bandwidth", fmt::format("must be > 0, got {}", a.bandwidth));
  return topoopt::topology_finder(traffic.servers, a.degree, traffic, {a.primes});
}

nlohmann::json topology_json(const topoopt::Topology& t) {
  nlohmann::json j{{"servers", t.servers},
                   {"degree", t.degree},
                   {"degree_allreduce", t.degree_allreduce},
                   {"degree_mp", t.degree_mp},
                   {"edges", t.edges},
                   {"allreduce", nlohmann::json::array()},
                   {"matchings", t.matchings},
                   {"routes", nlohmann::json::array()},
                   {"mp_hops", nlohmann::json::array()},
                   {"mp_bytes", t.mp_bytes},
                   {"mp_direct_bytes", t.mp_direct_bytes},
                   {"mp_satisfied_fraction", t.mp_bytes > 0 ? t.mp_direct_bytes / t.mp_bytes : 1.0},
                   {"mp_mean_hops", t.mp_bytes > 0 ? t.mp_byte_hops / t.mp_bytes : 0.0}};
  for (const auto& g : t.allreduce)
    j["allreduce"].push_back({{"group", g.group},
                              {"servers", g.servers},
                              {"degree", g.degree},
                              {"generators", g.generators},
                              {"mp_satisfied_bytes", g.mp_satisfied_bytes},
                              {"max_hops", g.max_hops}});
  for (const auto& r : t.mp_routes) {
    j["routes"].push_back({{"src", r.src}, {"dst", r.dst}, {"bytes", r.bytes}, {"path", r.path}});
    j["mp_hops"].push_back(r.hops());
  }
  return j;
}

nlohmann::json topology_summary_json(const topoopt::Topology& t) {
  auto j = topology_json(t);
  for (const char* list : {"edges", "matchings", "routes", "mp_hops"}) j.erase(list);
  for (auto& g : j["allreduce"]) {
    g["members"] = g["servers"].size();
    g.erase("servers");
  }
  int max_hops = 0;
  for (const auto& r : t.mp_routes) max_hops = std::max(max_hops, r.hops());
  j["links"] = t.edges.size();
  j["matchings"] = t.matchings.size();
  j["mp_transfers"] = t.mp_routes.size();
  j["mp_max_hops"] = max_hops;
  return j;
}

nlohmann::json fabric_costs_json(const TopoCostArgs& a) {
  if (a.servers < 2 || a.servers > 10000000)
    throw InputError("--servers", fmt::format("must be in 2..10000000, got {}", a.servers));
  if (a.degree < 1 || a.degree > 1024)
    throw InputError("--degree", fmt::format("must be in 1..1024, got {}", a.degree));
  const auto fabrics =
      a.fabric == "all" ? topoopt::all_fabrics() : std::vector{topoopt::parse_fabric(a.fabric, "--fabric")};
  topoopt::CostOptions o;
  o.switch_radix = a.radix;
  nlohmann::json j = nlohmann::json::array();
  for (auto fabric : fabrics) {
    const auto fc = topoopt::fabric_cost(fabric, a.servers, a.degree, a.bandwidth, o);
    j.push_back({{"fabric", topoopt::to_string(fabric)},
                 {"servers", fc.servers},
                 {"degree", fc.degree},
                 {"bandwidth_gbps", fc.bandwidth_gbps},
                 {"server_gbps", fc.server_gbps},
                 {"tiers", fc.tiers},
                 {"cost_usd", fc.interconnect_usd},
                 {"nic_usd", fc.nic_usd},
                 {"parts",
                  {{"transceivers", fc.transceivers},
                   {"switch_ports", fc.switch_ports},
                   {"patch_panel_ports", fc.patch_panel_ports},
                   {"ocs_ports", fc.ocs_ports},
                   {"one_by_two_switches", fc.one_by_two_switches},
                   {"fibres", fc.fibres}}}});
  }
  return j;
}

namespace {

nlohmann::json strategy_json(const topoopt::Strategy& s) {
  return {{"key", s.key()}, {"mp_npus", s.mp_npus}, {"layer_mp", s.layer_mp}, {"placement", s.placement}};
}

}  // namespace

topoopt::AlternatingResult optimize_topology(const TopoOptimizeArgs& a,
                                             const std::function<void(const std::string&)>& progress) {
  if (a.servers < 2 || a.servers > 4096)
    throw InputError("--servers", fmt::format("must be in 2..4096, got {}", a.servers));
  if (a.degree < 1 || a.degree > 1024)
    throw InputError("--degree", fmt::format("must be in 1..1024, got {}", a.degree));
  require_range(a.iterations, 1, workload::kMaxTrainingIterations, "--iterations");  // what the DAG may hold
  topoopt::ServerSpec spec;
  spec.gpus = a.gpus;
  const auto job = topoopt::server_job(a.workload, a.servers, spec, a.iterations);
  topoopt::AlternatingOptions o;
  o.degree = a.degree;
  o.gbps = a.bandwidth;
  o.rounds = a.rounds;
  o.search = a.search;
  o.search.move_layers = !a.no_layers;
  o.search.move_placement = !a.no_placement;
  o.progress = progress;
  return topoopt::alternating_optimization(job, o);
}

nlohmann::json optimize_json(const TopoOptimizeArgs& a, const topoopt::AlternatingResult& r) {
  nlohmann::json j{{"workload", a.workload},
                   {"servers", a.servers},
                   {"degree", a.degree},
                   {"bandwidth_gbps", a.bandwidth},
                   {"own", {{"strategy", strategy_json(r.own_strategy)}, {"iteration_ms", r.own_ns / 1e6}}},
                   {"rounds", nlohmann::json::array()},
                   {"converged", r.converged},
                   {"simulations", r.simulations}};
  for (const auto& round : r.rounds)
    j["rounds"].push_back({{"round", round.round},
                           {"strategy", strategy_json(round.strategy)},
                           {"searched_ms", round.searched_ns / 1e6},
                           {"iteration_ms", round.iteration_ns / 1e6},
                           {"steps", round.steps},
                           {"accepted", round.accepted},
                           {"improvements", round.improvements},
                           {"improved", round.improved}});
  j["best"] = {{"round", r.best_round},
               {"iteration_ms", r.best_ns / 1e6},
               {"strategy", strategy_json(r.best_strategy)},
               {"topology",
                {{"edges", r.best_topology.edges},
                 {"degree_allreduce", r.best_topology.degree_allreduce},
                 {"degree_mp", r.best_topology.degree_mp}}}};
  return j;
}

}  // namespace chorus::cli
