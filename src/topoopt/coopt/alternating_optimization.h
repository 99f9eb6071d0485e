#pragma once
// TopoOpt's alternating optimization (Sec. 3.2, Fig. 8): the Comp. x Comm. plane (the
// parallelization search, parallelization_search.h) and the Comm. x Topo. plane (TopologyFinder,
// Algorithm 1) take turns, each holding the other's last result fixed:
//   round 0: the strategy S0 searched on a generic network (the ideal full-bisection Fat-tree of
//            d x B per server), and the topology G0 TopologyFinder builds for its traffic: the
//            naive sequential approach the paper argues against, and the loop's start;
//   round r: S_r = search from the best strategy so far on the best topology so far;
//            G_r = TopologyFinder on S_r's traffic; both pairs (S_r, old G) and (S_r, G_r) are
//            candidates for the best;
// for `rounds` rounds, or until a round finds nothing faster (converged). The job's own strategy
// on TopologyFinder's topology for it is a candidate too, and the baseline the result is
// compared with.
#include <functional>
#include <string>
#include <vector>

#include "topoopt/coopt/parallelization_search.h"
#include "topoopt/topology_finder.h"

namespace chorus::topoopt {

struct AlternatingOptions {
  int degree = 4;        // d interfaces per server
  double gbps = 100;     // B per interface
  int rounds = 3;        // k, after round 0
  SearchOptions search;  // each round's search; round r uses seed search.seed + r
  FinderOptions finder;
  std::function<void(const std::string&)> progress;  // one line per finished phase
};

struct CoOptRound {
  int round = 0;
  Strategy strategy;        // S_r
  double searched_ns = 0;   // S_r on the network it was searched on (round 0: the ideal Fat-tree)
  Topology topology;        // G_r
  double iteration_ns = 0;  // S_r on G_r
  int steps = 0, accepted = 0, improvements = 0;
  bool improved = false;  // the best so far changed in this round
};

struct AlternatingResult {
  // The job's own strategy (its zoo parallelism, NPU i on server i) on TopologyFinder's topology
  // for its traffic.
  Strategy own_strategy;
  Topology own_topology;
  double own_ns = 0;
  std::vector<CoOptRound> rounds;  // rounds[0]: the sequential approach
  Strategy best_strategy;
  Topology best_topology;
  double best_ns = 0;
  int best_round = -1;     // -1: the job's own strategy
  bool converged = false;  // a round found nothing faster before the last
  int simulations = 0;     // flow-model runs in all
};

// InputError for degree < 1, gbps <= 0, rounds < 1, and what the search and TopologyFinder refuse.
AlternatingResult alternating_optimization(const Job& job, const AlternatingOptions& options);

// "round,strategy,mp_npus,layers_split,searched_ms,iteration_ms,steps,accepted,improvements,mp_hops_mean,
// degree_allreduce,degree_mp": the job's own strategy as round "own", then the rounds (0: sequential).
std::string alternating_csv(const AlternatingResult& result);

}  // namespace chorus::topoopt
