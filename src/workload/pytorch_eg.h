#pragma once
// Import of PyTorch execution graphs (torch.profiler.ExecutionGraphObserver: one JSON per rank,
// `schema`, `nodes` with id, parent, name, inputs / outputs with their shapes and types), the
// graphs Chakra's PyTorch converter starts from. Independent of how the graph was recorded.
// The operators under a thread's root become compute nodes (FLOPs of their matmul and
// convolution family, else the bytes of their tensors at the memory bandwidth), the
// process-group backends' collective records (`gloo:all_reduce`, `nccl:all_to_all`, ...,
// wherever the observer put them in the tree) communication nodes, and dependencies come from
// the data flow (tensor storages). With a torch profiler trace, the compute operators' durations
// are the measured ones.
// What maps to what: docs/workloads.md, "PyTorch execution graphs".
#include <map>
#include <string>
#include <vector>

#include "net/network.h"
#include "workload/dag.h"

namespace chorus::workload {

struct ExecutionGraphOptions {
  int iterations = 1;  // the graph is one recorded window; more repeat it, each after the previous one
  // A torch profiler trace of the same window and rank (workload/torch_profiler_trace.h): the
  // compute operators it has events of take their measured durations instead of the roofline's.
  std::string profiler_trace;  // its path; empty: none
  // The network dimensions a collective's process group spans, by the collective's number (1: the
  // graph's first, in issue order, as --check-ranks counts them). torch 1.13's graph does not
  // record a collective's group; collectives not given span every dimension.
  std::map<int, std::vector<int>> collective_dims;
  // Collectives chorus does not simulate (barrier, broadcast, ...: a capture's program may issue
  // them in its window) become compute nodes of no time instead of errors.
  bool skip_unsimulated = false;
  // Point-to-point records (`chorus:send`, `gloo:recv`, ...) become point-to-point nodes (op kSend /
  // kRecv, the bytes of the c10d:: operator's tensors, `peer` its destination or source argument:
  // the rank in the operator's process group) on the dimension point_to_point_dims gives by their
  // number (1: the graph's first send or recv, in issue order), dimension 0 if none; the thread's
  // next operator waits for them (torch's send and recv block), a recv's readers too. Without it
  // they are collectives chorus does not simulate (skip_unsimulated).
  bool point_to_point = false;
  std::map<int, int> point_to_point_dims;
  // With a profiler trace, the host's time as a rank spends it (chorus capture, docs/capture.md):
  // a compute operator's duration also takes the host's work on its thread after it until the next
  // operator outside any collective in flight (ProfiledEvent::gap_after_us: the Python between
  // operators), and loses the recording's measured cost of every event it encloses
  // (overhead_us_per_event each).
  bool host_gaps = false;
  double overhead_us_per_event = 0;
  // The trace holds several steps of one loop, each ending at "Optimizer.step...": each operator's
  // times are those of the median step (workload/torch_profiler_trace.h, median_over_steps).
  bool median_of_steps = false;
  int graph_steps = 0;  // with median_of_steps: the graph's steps (the trace's first ones are kept); 0: all
};

// "K=D[,D...][;K=D...]" (collective number = its dimensions, 0-based) into collective_dims;
// throws InputError naming `where` and the entry.
std::map<int, std::vector<int>> parse_collective_dims(const std::string& text, const std::string& where);

// True if `text` is a JSON object with `schema` and `nodes` (cheap check of its start and keys).
bool looks_like_execution_graph(const std::string& text);

// Throws InputError naming `source`, the node id and the field for malformed graphs: not JSON
// (with the byte offset), missing or mistyped fields, tensors whose records or shapes do not
// match, collectives chorus does not simulate; naming the profiler trace, the event and the field
// for a malformed trace, and the trace when none of its events matches an operator. `notes`, if
// given, receives how many operators took their durations from the trace.
Dag import_execution_graph(const std::string& text, const std::string& source, const net::Network& network,
                           const ExecutionGraphOptions& options = {}, std::string* notes = nullptr);

}  // namespace chorus::workload
