#pragma once
// One call from a request (op, size, chunks, scheduler) to a simulated result.
#include <string>

#include "coll/collective.h"
#include "net/network.h"
#include "sched/scheduler.h"
#include "sim/collective_executor.h"

namespace chorus::sim {

// Chunks one collective may be split into: a single collective (sim collective, run collective)
// up to kMaxChunks; each of many (a workload's DAG, a study's sweep) up to kMaxChunksOfMany.
inline constexpr int kMaxChunks = 1'000'000;
inline constexpr int kMaxChunksOfMany = 100'000;

struct CollectiveRequest {
  CollectiveKind op = CollectiveKind::kAllReduce;
  double size_bytes = 0;
  int num_chunks = 64;
  sched::SchedulerSpec scheduler = sched::parse_scheduler("themis-scf");
  sched::ThemisOptions themis;
};

// Convenience: a request with the scheduler given by its CLI name (throws InputError if unknown).
CollectiveRequest make_request(CollectiveKind op, double size_bytes, int num_chunks, const std::string& scheduler);

struct CollectiveRun {
  sched::Schedule schedule;  // with dim_order filled in (Sec. 4.6.2)
  CollectiveResult result;
};

// Simulates a given (e.g. loaded) schedule. Without enforce_dim_order the policy picks the
// order and the result's order is stored in the returned schedule's dim_order.
CollectiveRun run_schedule(const net::Network& network, sched::Schedule schedule, const SimOptions& options = {});

// Throws InputError for a request that cannot be simulated (size <= 0, chunks < 1).
CollectiveRun run_collective(const net::Network& network, const CollectiveRequest& request,
                             const SimOptions& options = {});

// The schedule planned on `plan_on` (the bandwidths the scheduler believes), simulated on `network`
// (the bandwidths the chunks get): Themis on stale bandwidths when a dimension is degraded (issue
// 34). The two must have the same dimensions (kind and size, in order); only bandwidths and
// latencies may differ. The ideal bound is always `network`'s. run_collective plans on `network`.
CollectiveRun run_collective_planned_on(const net::Network& plan_on, const net::Network& network,
                                        const CollectiveRequest& request, const SimOptions& options = {});

}  // namespace chorus::sim
