#pragma once
// TopoOpt's Comp. x Comm. plane (Sec. 3.2): the parallelization strategy and device placement
// that minimize a job's iteration time on a given topology, found by a seeded Markov chain Monte
// Carlo search as FlexFlow's (Jia et al., "Beyond Data and Model Parallelism for Deep Neural
// Networks", SysML 2019): propose a random change, keep it if the simulated iteration is faster,
// else keep it with probability exp(-(t' - t) / (temperature x t)). The cost is the flow-level
// model's iteration time of the strategy's training DAG on the fabric (sim/flow_network.h), so
// link bandwidths, hops and contention are what the search sees.
//
// A strategy (ours; FlexFlow's space is per-operator partitions of every tensor dimension):
//  - the model-parallel group size, a divisor of the servers (1: data parallel only);
//  - per layer, split over that group or replicated (workload::ParallelismConfig::layer_mp);
//  - the device placement, a permutation of the servers (NPU i of the DAG on server placement[i]).
// Every strategy trains the same global batch (servers x the per-server batch): a group of m
// servers trains m servers' samples together, so a split layer's FLOPs and activations are those
// of m x the per-server batch, shared by the group; a replicated layer trains each server's own.
// (The DAG generator alone keeps the per-NPU batch, so a larger group would shrink the batch.)
// Moves: flip one layer, change the group size, swap the servers of two NPUs. A model without a
// split pattern of its own (no Layer::mp_all_reduce: CANDLE, DLRM's MLPs) gets explicit choices,
// every layer split, when its group first grows beyond 1.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "net/graph/graph_network.h"
#include "net/network.h"
#include "topoopt/coopt/job.h"
#include "topoopt/traffic.h"
#include "workload/dag.h"

namespace chorus::topoopt {

struct Strategy {
  int mp_npus = 1;
  // Empty: the model's own pattern (every layer split, all-reducing where Layer::mp_all_reduce
  // says); only for models that have one (some layer all-reduces), else one entry per layer.
  std::vector<bool> layer_mp;
  std::vector<int> placement;  // empty: NPU i on server i
  // A stable text form, e.g. "mp=4 layers=110 placement=0,1,3,2" (also the search's cache key).
  std::string key() const;
};

// The job's own strategy (its zoo parallelism, identity placement).
Strategy initial_strategy(const Job& job);

// Iteration times of strategies on fabrics. The DAG of each (group size, layers) is built once.
class StrategyEvaluator {
 public:
  explicit StrategyEvaluator(Job job, double batch_tolerance = 1e-3);
  // The job's iteration time (ns) under `s` on `fabric` (InputError for an invalid strategy:
  // a group size that does not divide the servers, a wrong layer count, a bad placement, a group
  // without per-layer choices for a model without a pattern of its own).
  double iteration_ns(const Strategy& s, const net::GraphNetwork& fabric);
  // The traffic of one iteration under `s` (TopologyFinder's input).
  Traffic traffic(const Strategy& s);
  const Job& job() const { return job_; }
  int simulations() const { return simulations_; }

 private:
  struct Built {
    net::Network logical;
    workload::Dag dag;
  };
  const Built& built(const Strategy& s);
  Job job_;
  double batch_tolerance_;
  std::map<std::string, std::unique_ptr<Built>> dags_;
  int simulations_ = 0;
};

struct SearchOptions {
  int max_steps = 200;        // proposals at most
  int patience = 50;          // stop after this many proposals without a new best (TopoOpt: 50)
  double temperature = 0.05;  // relative: a 5% slower proposal is kept with probability 1/e
  std::uint64_t seed = 1;
  std::vector<int> mp_choices;  // group sizes to try; empty: every divisor of the servers
  bool move_layers = true;
  bool move_placement = true;
};

struct SearchResult {
  Strategy start, best;
  double start_ns = 0, best_ns = 0;
  int steps = 0;  // proposals made
  int accepted = 0;
  int improvements = 0;               // new bests
  std::vector<double> best_trace_ns;  // best so far after each proposal
};

// InputError for max_steps < 0, patience < 1, temperature < 0, or a group size in mp_choices that
// does not divide the servers.
SearchResult parallelization_search(StrategyEvaluator& evaluator, const Strategy& start,
                                    const net::GraphNetwork& fabric, const SearchOptions& options);

}  // namespace chorus::topoopt
