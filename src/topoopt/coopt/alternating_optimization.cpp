#include "topoopt/coopt/alternating_optimization.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "net/graph/fabrics.h"

namespace chorus::topoopt {
namespace {

// How many layers the strategy splits over its model-parallel group ("all": the model's pattern).
std::string layers_split(const Strategy& s) {
  if (s.mp_npus == 1) return "0";
  if (s.layer_mp.empty()) return "all";
  return fmt::format("{}", std::count(s.layer_mp.begin(), s.layer_mp.end(), true));
}

double mean_mp_hops(const Topology& t) { return t.mp_bytes > 0 ? t.mp_byte_hops / t.mp_bytes : 0.0; }

}  // namespace

AlternatingResult alternating_optimization(const Job& job, const AlternatingOptions& o) {
  if (o.degree < 1)
    throw InputError("degree", fmt::format("every server needs at least 1 interface, got {}", o.degree));
  if (!(o.gbps > 0) || !std::isfinite(o.gbps))
    throw InputError("gbps", fmt::format("must be > 0 Gb/s, got {}", o.gbps));
  if (o.rounds < 0) throw InputError("rounds", fmt::format("must be >= 0, got {}", o.rounds));
  const auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  StrategyEvaluator evaluator(job);
  AlternatingResult result;
  const auto topology_for = [&](const Strategy& s) {
    return topology_finder(job.servers, o.degree, evaluator.traffic(s), o.finder);
  };

  // The baseline: the job's own strategy on the topology built for it.
  result.own_strategy = initial_strategy(job);
  result.own_topology = topology_for(result.own_strategy);
  result.own_ns = evaluator.iteration_ns(result.own_strategy, topology_fabric(result.own_topology, o.gbps));
  result.best_strategy = result.own_strategy;
  result.best_topology = result.own_topology;
  result.best_ns = result.own_ns;
  say(fmt::format("own strategy {} on its topology: {:.3f} ms", result.own_strategy.key(), result.own_ns / 1e6));

  // Round r searches from `start` on `network`; its strategy then gets a topology of its own.
  const auto run_round = [&](int r, const Strategy& start, const net::GraphNetwork& network, bool network_is_topology) {
    auto search = o.search;
    search.seed = o.search.seed + static_cast<std::uint64_t>(r);
    const auto found = parallelization_search(evaluator, start, network, search);
    CoOptRound round;
    round.round = r;
    round.strategy = found.best;
    round.searched_ns = found.best_ns;
    round.steps = found.steps;
    round.accepted = found.accepted;
    round.improvements = found.improvements;
    round.topology = topology_for(round.strategy);
    round.iteration_ns = evaluator.iteration_ns(round.strategy, topology_fabric(round.topology, o.gbps));
    const double before = result.best_ns;
    if (network_is_topology && round.searched_ns < result.best_ns) {  // the new strategy on the old topology
      result.best_ns = round.searched_ns;
      result.best_strategy = round.strategy;
    }
    if (round.iteration_ns < result.best_ns) {  // the new strategy on its own topology
      result.best_ns = round.iteration_ns;
      result.best_strategy = round.strategy;
      result.best_topology = round.topology;
    }
    round.improved = result.best_ns < before;
    if (round.improved) result.best_round = r;
    say(fmt::format("round {}: {} steps, {}: {:.3f} ms on the {}, {:.3f} ms on its own topology{}", r, round.steps,
                    round.strategy.key(), round.searched_ns / 1e6, r == 0 ? "ideal Fat-tree" : "best topology so far",
                    round.iteration_ns / 1e6, round.improved ? "" : " (no improvement)"));
    result.rounds.push_back(std::move(round));
    return result.rounds.back().improved;
  };

  // Round 0, the sequential approach: the strategy for a generic network, then its topology.
  run_round(0, result.own_strategy, net::ideal_fat_tree(job.servers, o.degree, o.gbps), false);
  for (int r = 1; r <= o.rounds; ++r)
    if (!run_round(r, result.best_strategy, topology_fabric(result.best_topology, o.gbps), true)) {
      result.converged = r < o.rounds;
      break;
    }
  result.simulations = evaluator.simulations();
  return result;
}

std::string alternating_csv(const AlternatingResult& result) {
  std::string out =
      "round,strategy,mp_npus,layers_split,searched_ms,iteration_ms,steps,accepted,improvements,mp_hops_mean,"
      "degree_allreduce,degree_mp\n";
  out +=
      fmt::format("own,\"{}\",{},{},,{:.6f},,,,{:.4f},{},{}\n", result.own_strategy.key(), result.own_strategy.mp_npus,
                  layers_split(result.own_strategy), result.own_ns / 1e6, mean_mp_hops(result.own_topology),
                  result.own_topology.degree_allreduce, result.own_topology.degree_mp);
  for (const auto& r : result.rounds)
    out += fmt::format("{},\"{}\",{},{},{:.6f},{:.6f},{},{},{},{:.4f},{},{}\n", r.round, r.strategy.key(),
                       r.strategy.mp_npus, layers_split(r.strategy), r.searched_ns / 1e6, r.iteration_ns / 1e6, r.steps,
                       r.accepted, r.improvements, mean_mp_hops(r.topology), r.topology.degree_allreduce,
                       r.topology.degree_mp);
  return out;
}

}  // namespace chorus::topoopt
