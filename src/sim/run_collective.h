#pragma once
// One call from a request (op, size, chunks, scheduler) to a simulated result.
#include "coll/collective.h"
#include "net/network.h"
#include "sched/scheduler.h"
#include "sim/collective_executor.h"

namespace chorus::sim {

struct CollectiveRequest {
  coll::CollectiveOp op = coll::CollectiveOp::kAllReduce;
  double size_bytes = 0;
  int num_chunks = 64;
  sched::SchedulerSpec scheduler = sched::parse_scheduler("themis-scf");
  sched::ThemisOptions themis;
};

struct CollectiveRun {
  sched::Schedule schedule;  // with dim_order filled in (Sec. 4.6.2)
  CollectiveResult result;
};

// Throws InputError for a request that cannot be simulated (size <= 0, chunks < 1).
CollectiveRun run_collective(const net::Network& network, const CollectiveRequest& request,
                             const SimOptions& options = {});

}  // namespace chorus::sim
