#pragma once
// Execution-plan options of a comm-op (SYNDICATE Sec. 4.2-4.3): an algorithm, a segmentation
// S(D/segments), a splining (all-to-all: k-way, P(N/k)) and a physical plan (a path of the
// topology). An option expands, through the motif algebra of coll/motif, into the motifs the
// enforcer runs; cost_model.h turns those motifs into timed steps.
#include <string>
#include <vector>

#include "coll/motif/motif.h"
#include "syndicate/topology.h"
#include "workload/dag.h"

namespace chorus::syndicate {

// A comm node of the training DAG as SYNDICATE sees it. `bytes` follows the DAG's convention
// (per NPU; all-to-all: the NPU's whole send buffer, D = bytes / N per destination).
struct CommOp {
  int node = -1;
  std::string name;
  CollectiveKind kind = CollectiveKind::kAllReduce;
  double bytes = 0;
  std::vector<int> dims;   // topology dimensions the process group spans
  std::vector<int> sizes;  // their sizes
  int ranks() const;       // product of sizes
};

// The comm node `node` of `dag` on `topo`. Point-to-point nodes are not comm-ops (InputError).
CommOp make_comm_op(const workload::Dag& dag, int node, const Topology& topo);

struct PlanOption {
  std::string algorithm;  // all_reduce: ring | tree; all_to_all: pairwise; others: ring; or a cost-table name
  int segments = 1;       // S(ceil(D / segments))
  int spline = 1;         // all_to_all: k-way splining P(ceil(N / k)) (1: none)
  int path = 0;           // index into Topology::paths
  // Multipath (Sec. 4.2.2, Fig. 9: motifs multiplexed over interconnects): the last
  // `alt_segments` of the `segments` segments run on path `alt_path` (-1: every segment on `path`).
  int alt_path = -1;
  int alt_segments = 0;
  int path_of_segment(int segment) const {
    return alt_path >= 0 && segment >= segments - alt_segments ? alt_path : path;
  }
  friend bool operator==(const PlanOption&, const PlanOption&) = default;
};

// "tree S4 @nvswitch+rdma", "pairwise P2 @pcie+tcp", "ring S8 @nvswitch+rdma 2@pcie+tcp".
std::string describe(const PlanOption& o, const Topology& topo);

struct OptionSpace {
  std::vector<int> segments = {1, 2, 4, 8};  // tried where a segment keeps >= min_segment_bytes
  std::vector<int> splines = {1, 2, 4};      // all-to-all
  double min_segment_bytes = 64 * 1024;
  bool multipath = true;  // also split the segments of one option over two paths
};

// Every option of `op` on `topo`: with a cost table, its rows for the op's kind (segmented only
// where the row has a bandwidth term); else algorithms x segments x splines x paths, then the
// multipath options (after every single-path option).
std::vector<PlanOption> enumerate_options(const CommOp& op, const Topology& topo, const OptionSpace& space);

// The motifs of `op` under option `o`, on the comm-op's ranks 0..N-1 (rank r has coordinate
// (r / prod(sizes before k)) % size_k on op.dims[k]).
coll::motif::MotifPlan expand(const CommOp& op, const PlanOption& o);

// The segment length of S(D/segments) under `o`: a motif of expand() belongs to segment
// motif.bytes.begin / segment_size(op, o).
coll::motif::Bytes segment_size(const CommOp& op, const PlanOption& o);

}  // namespace chorus::syndicate
