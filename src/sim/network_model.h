#pragma once
// The network behind a training DAG's communication nodes. The DAG executor starts comm
// nodes and advances the model event by event, interleaved with its own compute events, so
// any network model that can say "when is your next event" plugs in: the analytical
// per-dimension chunk model (analytical_network.h), the ideal bound (ideal_network.h), and
// later flow-level models of graph fabrics.
#include <vector>

#include "workload/dag.h"

namespace chorus::sim {

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;
  // Begins communication node `id` (a kComm node) at `now_ns`. Throws InputError for a
  // request the model cannot carry.
  virtual void start(int id, const workload::Node& comm, double now_ns) = 0;
  virtual bool idle() const = 0;
  // Time of the next internal event; only when !idle().
  virtual double next_event_ns() const = 0;
  // Processes that event; appends the ids of nodes that finished with it.
  virtual void step(std::vector<int>& finished) = 0;
  // Bytes one NPU has sent so far, over all dimensions.
  virtual double bytes_sent_per_npu() const = 0;
};

}  // namespace chorus::sim
