#pragma once
// The joint optimizer's input (SYNDICATE Sec. 4.3): the training DAG unrolled over its
// iterations, each node's compute time, and for every comm-op its execution-plan options with
// their timed steps, computed once so that evaluating a plan only schedules.
#include <functional>
#include <string>
#include <vector>

#include "syndicate/cost_model.h"
#include "syndicate/plan_option.h"
#include "syndicate/topology.h"
#include "workload/dag.h"

namespace chorus::syndicate {

struct OptionCost {
  PlanOption option;
  std::vector<Step> steps;
  std::vector<std::vector<int>> children;  // per step: the steps whose `after` names it
  double solo_ns = 0;                      // solo_time_ns(steps)
};

struct CommChoice {
  CommOp op;
  std::vector<OptionCost> options;
  int fastest = 0;  // the greedy execution planner's choice: least solo time (first on ties)
  // Today's stack's choice (the baselines' plan, Sec. 6.4): the fastest unsegmented option on
  // the topology's first path (NCCL's NVLink + RDMA), all-to-all unsplined, one path.
  int standard = 0;
};

// A plan: the chosen option of every comm-op (index into CommChoice::options).
using PlanChoice = std::vector<int>;

struct Problem {
  workload::Dag dag;
  Topology topology;
  std::vector<double> compute_ns;  // per node (0 for comm nodes)
  std::vector<int> comm_of_node;   // index into comms, -1 for compute nodes
  std::vector<CommChoice> comms;
  std::vector<std::vector<int>> successors;  // per node

  PlanChoice greedy_plan() const;
  PlanChoice standard_plan() const;
  // Checks a plan's size and ranges; throws InputError naming `where`.
  void check(const PlanChoice& plan, const std::string& where) const;
};

// Replaces every step's duration by `duration(comm, option, step)` (e.g. measured on the
// runtime) and recomputes solo times and the greedy choice.
void retime(Problem& problem, const std::function<double(int comm, int option, int step)>& duration);

// Every comm node of `dag` must be a collective over dimensions of `topo`; compute nodes take
// their fixed duration or the topology's roofline time.
Problem make_problem(const workload::Dag& dag, const Topology& topo, const OptionSpace& space);

}  // namespace chorus::syndicate
