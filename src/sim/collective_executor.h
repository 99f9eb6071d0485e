#pragma once
// Executes a chunk schedule on a multi-dimensional network (the analytical network
// model of docs/themis-model.md) with the discrete-event core.
//
// Each dimension is a resource with a queue. A chunk stage arriving at a dimension first
// pays the stage's fixed delay A_K (steps x step latency); fixed delays of different
// chunks overlap freely. It then waits for the dimension's bandwidth, which serves one
// chunk at a time, at the full aggregate bandwidth, choosing among the waiting chunks by
// the intra-dimension policy (FIFO: first arrived; SCF: smallest stage first). So a
// dimension runs several chunks at once exactly when one chunk cannot keep it busy: while
// one chunk transfers, others are in their latency phase (Themis Sec. 4.3).
#include "net/network.h"
#include "sched/schedule.h"
#include "sim/collective_result.h"

namespace chorus::sim {

struct SimOptions {
  bool record_stages = false;  // keep every StageRecord (for traces and --schedules)
  // Run each dimension's chunk operations strictly in the schedule's dim_order (Themis
  // Sec. 4.6.2): a chunk that is ready out of turn waits. An order that contradicts the
  // chunks' own stage order deadlocks; the simulator then throws InputError naming the
  // dimensions and the chunk operations they wait for.
  bool enforce_dim_order = false;
  // At most this many chunks on a dimension at once (in their fixed delay, waiting for the
  // bandwidth or transferring); later arrivals queue in policy order. 0 = no limit (the
  // default rule above). 1 makes every stage pay A_K + n_K B_K exclusively, like ASTRA-sim
  // with one active chunk per dimension. Not applied with enforce_dim_order.
  int max_chunks_per_dim = 0;
};

CollectiveResult simulate_schedule(const net::Network& network, const sched::Schedule& schedule,
                                   const SimOptions& options = {});

}  // namespace chorus::sim
