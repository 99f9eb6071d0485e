#pragma once
// optSched (SYNDICATE Pseudocode 1, lines 12-29), made precise as a list scheduler on a
// discrete-event clock (docs/syndicate.md, "optSched"):
//  - one compute stream per rank runs ready compute nodes one at a time, lowest node index
//    first (program order, the paper's fifoDequeue);
//  - communication steps become ready when their comm-op's DAG dependencies and their parent
//    steps are done; whenever the clock moves, ready steps are taken in priority order and each
//    starts if none of its channels is busy or wanted by a higher-priority ready step that could
//    not start (so motifs on disjoint channels overlap; the paper's pseudocode, with one comm_time,
//    cannot);
//  - priority: kCriticalPath (the paper's criticalPathDequeue): the longest path, in time, from
//    the step to the end of the DAG including the step, compute and steps of the chosen options
//    on the way; kFifo: the comm-op submitted first (lowest node index); kLifo: the one
//    submitted last (ByteScheduler's order); ties by step order;
//  - single_stream: at most one step in flight at a time (a traditional stack with one
//    communication stream: FIFO and BS+);
//  - kFifo and kLifo also submit in program order: a comm-op is submitted when the program
//    reaches it, once every compute node before it (lower node index) has completed, as a
//    collective issued on a CUDA stream waits for the kernels issued before it. Only the
//    enforcer's critical-path order may run a comm-op earlier than that (Sec. 6.5: the next
//    batch's data-prep moved into the previous iteration, which the baselines cannot do).
// Sequence numbers are the steps' start order; the enforcer issues motifs in that order.
#include <string_view>
#include <vector>

#include "syndicate/problem.h"

namespace chorus::syndicate {

enum class Order { kCriticalPath, kFifo, kLifo };

struct SchedOptions {
  Order order = Order::kCriticalPath;
  bool single_stream = false;
};

struct ScheduledStep {
  int comm = 0;  // index into Problem::comms
  int step = 0;  // index into the chosen option's steps
  int seq = 0;   // start order
  double start_ns = 0;
  double end_ns = 0;
};

struct Schedule {
  double makespan_ns = 0;   // all iterations of the DAG
  double iteration_ns = 0;  // makespan / iterations
  double compute_busy_ns = 0;
  double compute_idle_fraction = 0;  // 1 - compute_busy / makespan (Sec. 6.3 "compute idling")
  std::vector<ScheduledStep> steps;  // with record, in sequence order
  std::vector<double> node_end_ns;   // with record, per DAG node
};

// Evaluates plans on one problem; keeps its buffers between calls (one evaluation allocates
// nothing once warm). Not thread-safe: one per thread.
class Scheduler {
 public:
  explicit Scheduler(const Problem& problem);
  // The schedule of `plan`; fills steps and node_end_ns when `record`.
  Schedule run(const PlanChoice& plan, const SchedOptions& options, bool record = false);
  double cost(const PlanChoice& plan, const SchedOptions& options) { return run(plan, options).iteration_ns; }

 private:
  struct Event {
    double time;
    int task;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : task > o.task; }
  };
  const Problem& p_;
  std::vector<int> base_, node_of_task_, pending_, remaining_, node_pending_, ready_comm_;
  std::vector<char> compute_done_;  // program-order submission: compute nodes completed
  std::vector<double> priority_, entry_priority_, start_, end_;
  std::vector<int> seq_;
  std::vector<Event> events_;
  std::vector<int> ready_compute_;
};

std::string_view to_string(Order order);

// The compute nodes in the order the (recorded) schedule ran them on its compute stream: by
// start, then end, so that a node of no duration (an optimizer step waiting for a reduce-scatter)
// comes between the nodes that ran before and after it, whatever its index.
std::vector<int> compute_stream_order(const Problem& problem, const Schedule& schedule);

}  // namespace chorus::syndicate
