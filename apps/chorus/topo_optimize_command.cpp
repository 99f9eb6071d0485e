// chorus topo optimize — TopoOpt's alternating optimization (Sec. 3.2): parallelization strategy,
// device placement, topology and routing for one job (docs/topoopt.md, "Alternating optimization").
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/chorus/commands.h"
#include "apps/chorus/topo_run.h"
#include "core/error.h"
#include "core/memory_budget.h"
#include "core/text_file.h"
#include "net/graph/graph_yaml.h"
#include "topoopt/coopt/alternating_optimization.h"
#include "workload/parallelism.h"

namespace chorus::cli {

void register_topo_optimize_command(CLI::App& topo) {
  static TopoOptimizeArgs a;
  auto* opt = topo.add_subcommand(
      "optimize",
      "Alternating optimization (Sec. 3.2): a seeded MCMC search of the parallelization strategy and device "
      "placement on the flow-level model, and TopologyFinder on its traffic, in turns");
  opt->add_option("--workload", a.workload,
                  "Zoo workload: topoopt-candle, topoopt-bert, topoopt-dlrm (a server = --gpus-per-server GPUs), "
                  "or another zoo name with --gpus-per-server 1")
      ->required();
  opt->add_option("--servers", a.servers, "Servers (one NPU of the training DAG each)")->capture_default_str();
  opt->add_option("--degree", a.degree, "Interfaces per server, d")->capture_default_str();
  opt->add_option("--bandwidth", a.bandwidth, "Gb/s per interface, B")->capture_default_str();
  opt->add_option("--gpus-per-server", a.gpus, "GPUs per server (batch and compute of a server)")
      ->capture_default_str();
  opt->add_option("--iterations", a.iterations, "Training iterations simulated per evaluation")->capture_default_str();
  opt->add_option("--rounds", a.rounds, "Alternating rounds after round 0 (the sequential approach) at most, k")
      ->capture_default_str();
  opt->add_option("--steps", a.search.max_steps, "MCMC proposals per round at most")->capture_default_str();
  opt->add_option("--patience", a.search.patience,
                  "End a round's search after this many proposals without a new best (TopoOpt: 50)")
      ->capture_default_str();
  opt->add_option("--temperature", a.search.temperature,
                  "Metropolis temperature, relative: a proposal x% slower is kept with probability exp(-x/100/T)")
      ->capture_default_str();
  opt->add_option("--seed", a.search.seed, "Seed of the search")->capture_default_str();
  opt->add_option("--mp-choices", a.search.mp_choices,
                  "Model-parallel group sizes to try (default: every divisor of --servers)")
      ->delimiter(',');
  opt->add_flag("--no-layers", a.no_layers, "Do not search per-layer split / replicated choices");
  opt->add_flag("--no-placement", a.no_placement, "Do not search the device placement");
  opt->add_flag("--json", a.json,
                "Print the job's own strategy, the rounds (round 0: the sequential approach), the best strategy and "
                "topology as JSON");
  opt->add_option("--csv", a.csv, "Also write one row per round (and the job's own strategy) to this CSV file");
  opt->add_option("--save", a.save,
                  "Also write the best topology as a fabric YAML for `chorus sim workload --topology`");
  opt->add_flag("-q,--quiet", a.quiet, "No progress lines on stderr");
  opt->callback([] {
    std::function<void(const std::string&)> progress;
    if (!a.quiet) progress = [](const std::string& line) { fmt::print(stderr, "progress: {}\n", line); };
    const auto r = optimize_topology(a, progress);
    if (!a.csv.empty()) write_text_file(a.csv, topoopt::alternating_csv(r));
    if (!a.save.empty()) {
      auto fabric = topoopt::topology_fabric(r.best_topology, a.bandwidth);
      fabric.name = fmt::format("topoopt-{}-d{}-optimized", a.workload, a.degree);
      write_text_file(a.save, net::write_fabric_yaml(fabric));
    }
    if (a.json) {
      fmt::print("{}\n", optimize_json(a, r).dump());
      return;
    }
    fmt::print("{:>6} {:>12} {:>12} {:>6}  {}\n", "round", "searched ms", "own topo ms", "steps", "strategy");
    fmt::print("{:>6} {:>12} {:>12.3f} {:>6}  {}\n", "own", "-", r.own_ns / 1e6, "-", r.own_strategy.key());
    for (const auto& round : r.rounds)
      fmt::print("{:>6} {:>12.3f} {:>12.3f} {:>6}  {}\n", round.round, round.searched_ns / 1e6,
                 round.iteration_ns / 1e6, round.steps, round.strategy.key());
    const auto& sequential = r.rounds.front();
    fmt::print("round 0 is the sequential approach (searched on the ideal Fat-tree, then TopologyFinder): {:.3f} ms\n",
               sequential.iteration_ns / 1e6);
    fmt::print(
        "best: {:.3f} ms ({}{}): {:.2f}x faster than the job's own strategy, {:.2f}x faster than the sequential "
        "approach\n",
        r.best_ns / 1e6,
        r.best_round < 0 ? std::string("the job's own strategy") : fmt::format("round {}", r.best_round),
        r.converged ? ", converged" : "", r.own_ns / r.best_ns, sequential.iteration_ns / r.best_ns);
    fmt::print("{} flow-model simulations\n", r.simulations);
    if (!a.csv.empty()) fmt::print("wrote {}\n", a.csv);
    if (!a.save.empty()) fmt::print("wrote {} (the best topology as a fabric YAML)\n", a.save);
  });
}

}  // namespace chorus::cli
