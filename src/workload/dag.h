#pragma once
// A training iteration as a DAG of compute and communication, seen from one NPU (all NPUs of
// a synchronous data/model-parallel job run the same DAG). Plain data: nodes with
// attributes, edges as dependency lists; simulators, planners and importers all read and
// write this one value.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coll/collective.h"

namespace chorus::workload {

enum class NodeKind { kCompute, kComm };
// Compute kinds of a training iteration (Themis Fig. 12 splits forward from backward; the
// optimizer update is reported on its own).
enum class ComputeKind { kForward, kInputGradient, kWeightGradient, kOptimizer };
// Which parallelism a communication belongs to (Fig. 12: exposed data-parallel vs
// model-parallel communication; pipeline: transfers between pipeline stages).
enum class CommGroup { kDataParallel, kModelParallel, kPipeline };
enum class CommKind { kCollective, kPointToPoint };

std::string_view to_string(NodeKind kind);
std::string_view to_string(ComputeKind kind);  // "forward", "input_gradient", "weight_gradient", "optimizer"
std::string_view to_string(CommGroup group);   // "dp", "mp", "pp"

struct Node {
  std::string name;
  NodeKind kind = NodeKind::kCompute;
  // Compute: work for the roofline model (per NPU), or a fixed duration when duration_ns >= 0.
  ComputeKind compute = ComputeKind::kForward;
  double flops = 0;
  double mem_bytes = 0;
  double duration_ns = -1;
  // Communication: a collective of `bytes` (Sec. 2.3 size convention, per NPU) over the
  // network dimensions `dims` (0-based), or a point-to-point transfer of `bytes` on dims[0].
  CommKind comm = CommKind::kCollective;
  CollectiveKind op = CollectiveKind::kAllReduce;
  double bytes = 0;
  std::vector<int> dims;
  // Point-to-point: op is kSend or kRecv when the importer knows which (a capture's), and `peer`
  // the other rank (the capture's world rank; -1 when unknown, as for a pipeline's transfers).
  int peer = -1;
  CommGroup group = CommGroup::kDataParallel;
  // The pipeline stage whose NPUs run the node (0..Dag::stages - 1): each stage has its own
  // compute stream and network links. Stages are symmetric inside (every NPU of a stage runs
  // that stage's nodes), so the DAG is one NPU's view per stage.
  int stage = 0;
  // Bookkeeping for reports and traces.
  int layer = -1;
  int iteration = 0;
  // Nodes that must finish before this one starts; always earlier nodes (smaller index), so
  // the node order is a topological order and the graph is acyclic by construction.
  std::vector<int> deps;
};

// A group of NPUs that share one kind of parallel traffic: the network dimensions (0-based) it
// spans and its NPUs (their product; 1 and no dimension for a group of one).
struct ParallelGroup {
  std::vector<int> dims;
  long long npus = 1;
  bool operator==(const ParallelGroup&) const = default;
};

// Which dimensions carry which parallel traffic in a DAG generated from a model
// (workload/parallelism.h): tensor (model) parallel innermost, data parallel in between,
// pipeline parallel outermost; tp.npus x dp.npus x pp.npus = the network's NPUs.
struct ParallelLayout {
  ParallelGroup tp, dp, pp;
  ParallelGroup ep;         // expert layers' all-to-all group (MoE); empty without expert layers
  bool embeddings = false;  // hybrid DLRM: embedding tables sharded over all NPUs (all-to-all)
  bool operator==(const ParallelLayout&) const = default;
};

struct Dag {
  std::string name;
  int iterations = 1;
  int stages = 1;  // pipeline stages (workload/pipeline.h)
  std::vector<Node> nodes;
  // The parallel layout of a DAG generated from a model; none for imported traces and graphs
  // (their collectives name their own dimensions).
  std::optional<ParallelLayout> layout;

  int add(Node node) {
    nodes.push_back(std::move(node));
    return static_cast<int>(nodes.size()) - 1;
  }
};

// Appends `times` repetitions of a recorded window (a trace or graph of one or more iterations:
// nodes in dependency order, deps among themselves, `iteration` their iteration in the window) to
// `dag`, which must be empty: each repetition's nodes without dependencies wait for the previous
// one's sinks. dag.iterations = times x the window's iterations.
void repeat_window(Dag& dag, const std::vector<Node>& window, int times);

// The ranks of one job must issue the same collectives (Chakra traces and execution graphs are
// one file per rank; chorus simulates one rank's view). Throws InputError naming `other_where`
// (say, its file and rank), the collective's position and name and the field that differs (op,
// bytes, dims, group, their count, iterations) against `reference_where`. A point-to-point node
// matches one whatever its direction (a send and its peer's recv).
void check_same_communication(const Dag& reference, const std::string& reference_where, const Dag& other,
                              const std::string& other_where);

// Checks every node: its stage in 0..stages - 1, deps in range and earlier, compute work >= 0, comm bytes >= 0 with
// distinct dimensions < num_dims (num_dims < 0 skips that check). Throws InputError naming
// `where`, the node and the field.
void validate(const Dag& dag, int num_dims, const std::string& where);

}  // namespace chorus::workload
