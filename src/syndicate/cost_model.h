#pragma once
// The cost of an execution-plan option (SYNDICATE Sec. 4.3 "execution plan cost model"): its
// motifs grouped into *steps* and each step timed.
//
// A step is what one rank sees: a maximal run of consecutive motifs of the same kind and byte
// range on disjoint rank sets of equal size with the same parents (a tree's reduces in every
// node at once), so each rank takes part in at most one motif of a step. A step occupies the
// channels of its path on the dimensions its motifs' ranks span (cost_model.cpp), and lasts,
// with g ranks per motif, b bytes, B the slowest and alpha the largest latency of those channels:
//   all_reduce (ring)            2 (g-1) (alpha + b / (g B))
//   reduce_scatter, all_gather     (g-1) (alpha + b / (g B))
//   reduce, broadcast (pipelined) ceil(log2 g) alpha + b / B
//   all_to_all (pairwise)        p (alpha + b / B), p = destinations other than itself, b per destination
// With a cost table the option's rows give the time of each segment instead (one step per
// segment, on every channel of the path).
#include <vector>

#include "syndicate/plan_option.h"
#include "syndicate/topology.h"

namespace chorus::syndicate {

struct Step {
  Kind kind = Kind::kAllReduce;
  int group = 1;                // ranks per motif
  double bytes = 0;             // per motif (all-to-all: per destination)
  ChannelSet channels = 0;
  std::vector<int> after;       // parent steps of the same option
  int first_motif = 0;          // motifs [first_motif, first_motif + motifs) of expand()
  int motifs = 1;
  double duration_ns = 0;
};

// The steps of `op` under option `o` (analytical model, or the topology's cost table).
std::vector<Step> option_steps(const CommOp& op, const PlanOption& o, const Topology& topo);

// The time of the option alone on an idle network: its steps scheduled as soon as their
// parents are done and their channels are free (the execution planner's greedy cost).
double solo_time_ns(const std::vector<Step>& steps);

// The analytical time of one motif-step (formula above).
double step_time_ns(Kind kind, int group, double bytes, int peers, double bandwidth_gbps, double latency_ns);

}  // namespace chorus::syndicate
