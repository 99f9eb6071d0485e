#pragma once
// `chorus topo find`, `topo cost` and `topo optimize`: their options and their runs without the output, so
// that what the commands print with --json and what `chorus sweep` records for a point are the
// same JSON.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "topoopt/coopt/alternating_optimization.h"
#include "topoopt/topology_finder.h"

namespace chorus::cli {

struct TopoFindArgs {
  int servers = 0;
  int degree = 4;
  std::string workload;
  std::string traffic;
  bool primes = false;
  bool json = false;
  std::string save;
  double bandwidth = 100;
};

// Checks the options, reads the traffic and runs TopologyFinder; InputError names the flag or file.
topoopt::Topology find_topology(const TopoFindArgs& a);
// The --json object: the topology with its edges, routes and per-route hops.
nlohmann::json topology_json(const topoopt::Topology& t);
// What a sweep records: topology_json without its per-link and per-route lists (edges, matchings,
// routes, mp_hops) and its groups' member lists, with their counts and the longest route instead.
nlohmann::json topology_summary_json(const topoopt::Topology& t);

struct TopoCostArgs {
  std::string fabric = "all";
  int servers = 128;
  int degree = 4;
  double bandwidth = 100;
  int radix = 32;
  bool json = false;
};

// The --json list, one object per fabric (all of them for "all"); InputError names the flag.
nlohmann::json fabric_costs_json(const TopoCostArgs& a);

struct TopoOptimizeArgs {
  std::string workload;
  int servers = 16;
  int degree = 4;
  double bandwidth = 100;
  int gpus = 4;
  int iterations = 1;
  int rounds = 3;
  topoopt::SearchOptions search;
  bool no_layers = false, no_placement = false;
  bool json = false, quiet = false;
  std::string csv, save;
};

// Checks the options and runs the alternating optimization (progress lines to `progress`, if
// any); InputError names the flag.
topoopt::AlternatingResult optimize_topology(const TopoOptimizeArgs& a,
                                             const std::function<void(const std::string&)>& progress);
// The --json object: the job's own strategy, the rounds, the best strategy and topology.
nlohmann::json optimize_json(const TopoOptimizeArgs& a, const topoopt::AlternatingResult& r);

}  // namespace chorus::cli
