#pragma once
// The cost of an execution-plan option (SYNDICATE Sec. 4.3 "execution plan cost model"): its
// motifs grouped into *steps* and each step timed.
//
// A step is what one rank sees: a maximal run of consecutive motifs of the same kind and byte
// range on disjoint rank sets of equal size with the same parents (a tree's reduces in every
// node at once), so each rank takes part in at most one motif of a step. A step occupies the
// channels of its path on the dimensions its motifs' ranks differ in (cost_model.cpp). Each hop
// of a ring, or destination of an all-to-all, is charged to the channel of the highest dimension
// it crosses (the scale-out channel a hop between nodes leaves by). With g ranks per motif, b
// bytes, alpha the largest latency of the channels used, and on channel c of bandwidth B_c a
// share f_c of the ring's hops or p_c of the destinations:
//   all_reduce (ring)            2 (g-1) (alpha + max_c f_c b / (g B_c))
//   reduce_scatter, all_gather     (g-1) (alpha + max_c f_c b / (g B_c))
//   reduce, broadcast (pipelined) ceil(log2 g) alpha + b / min_c B_c
//   all_to_all (pairwise)        max_c p_c (alpha_c + b (1 + k_c (p_c - 1)) / B_c), b per destination
// A ring over several dimensions runs as g rotated rings (NCCL's channels: each rank's link
// on channel c carries the share f_c of the bytes), so a ring spanning nodes of 8 GPUs with a
// NIC each puts 1/8 of its bytes on each NIC; destinations on different channels are sent to
// at once. On one channel these are the textbook alpha-beta times. k_c is the channel's incast
// penalty (topology.h; 0 unless a topology sets it): the pattern is symmetric, so p_c senders
// converge on each receiver at once.
// With a cost table the option's rows give the time of each segment instead (one step per
// segment, on every channel of the path).
#include <vector>

#include "syndicate/plan_option.h"
#include "syndicate/topology.h"

namespace chorus::syndicate {

struct Step {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int group = 1;     // ranks per motif
  double bytes = 0;  // per motif (all-to-all: per destination)
  ChannelSet channels = 0;
  std::vector<int> after;  // parent steps of the same option
  int first_motif = 0;     // motifs [first_motif, first_motif + motifs) of expand()
  int motifs = 1;
  int segment = 0;  // the segment of S(D/segments) its motifs belong to
  double duration_ns = 0;
};

// The steps of `op` under option `o` (analytical model, or the topology's cost table).
std::vector<Step> option_steps(const CommOp& op, const PlanOption& o, const Topology& topo);

// The steps of a multipath option `o` from those of its two single-path options (`o` with every
// segment on o.path, and on o.alt_path): the same steps, each taken from the option of its
// segment's path. Equal to option_steps(op, o, topo), without expanding the motifs again.
std::vector<Step> multipath_steps(const PlanOption& o, const std::vector<Step>& on_path,
                                  const std::vector<Step>& on_alt);

// The time of the option alone on an idle network: its steps scheduled as soon as their
// parents are done and their channels are free (the execution planner's greedy cost).
double solo_time_ns(const std::vector<Step>& steps);

// A motif's traffic on one channel: ring hops (of `group`) or all-to-all destinations on it.
struct ChannelLoad {
  int count = 0;
  double bandwidth_gbps = 0;
  double latency_ns = 0;
  double incast_penalty = 0;  // all-to-all: `count` senders converge on each receiver
};

// The analytical time of one motif-step (formulas above), its traffic spread over channels.
double step_time_ns(CollectiveKind kind, int group, double bytes, const std::vector<ChannelLoad>& loads);
// The same on one channel: `peers` destinations of an all-to-all; a ring's every hop.
double step_time_ns(CollectiveKind kind, int group, double bytes, int peers, double bandwidth_gbps, double latency_ns);

}  // namespace chorus::syndicate
