#pragma once
// `chorus topo find` and `chorus topo cost`: their options and their runs without the output, so
// that what the commands print with --json and what `chorus sweep` records for a point are the
// same JSON.
#include <string>

#include <nlohmann/json.hpp>

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

}  // namespace chorus::cli
