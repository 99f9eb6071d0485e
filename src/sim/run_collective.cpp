#include "sim/run_collective.h"

#include <cmath>
#include <fmt/format.h>

#include "core/error.h"
#include "sched/ideal.h"

namespace chorus::sim {

CollectiveRequest make_request(CollectiveKind op, double size_bytes, int num_chunks, const std::string& scheduler) {
  CollectiveRequest req;
  req.op = op;
  req.size_bytes = size_bytes;
  req.num_chunks = num_chunks;
  req.scheduler = sched::parse_scheduler(scheduler);
  return req;
}

CollectiveRun run_schedule(const net::Network& network, sched::Schedule schedule, const SimOptions& options) {
  CollectiveRun run;
  run.result = simulate_schedule(network, schedule, options);
  if (!options.enforce_dim_order) schedule.dim_order = run.result.dim_order;
  run.schedule = std::move(schedule);
  return run;
}

CollectiveRun run_collective(const net::Network& network, const CollectiveRequest& request, const SimOptions& options) {
  return run_collective_planned_on(network, network, request, options);
}

CollectiveRun run_collective_planned_on(const net::Network& plan_on, const net::Network& network,
                                        const CollectiveRequest& request, const SimOptions& options) {
  bool same_shape = plan_on.dims.size() == network.dims.size();
  for (std::size_t k = 0; same_shape && k < network.dims.size(); ++k)
    same_shape = plan_on.dims[k].kind == network.dims[k].kind && plan_on.dims[k].size == network.dims[k].size;
  if (!same_shape)
    throw InputError("plan network",
                     fmt::format("the schedule is planned on {} ({}) but runs on {} ({}): the dimensions "
                                 "must be the same",
                                 plan_on.name, plan_on.shape(), network.name, network.shape()));
  if (!(request.size_bytes > 0) || !std::isfinite(request.size_bytes))
    throw InputError("size_bytes", fmt::format("collective size must be positive, got {}", request.size_bytes));
  if (request.num_chunks < 1 || request.num_chunks > kMaxChunks)
    throw InputError("num_chunks",
                     fmt::format("number of chunks must be in 1..{}, got {}", kMaxChunks, request.num_chunks));
  CollectiveRun run = run_schedule(network,
                                   sched::make_schedule(plan_on, request.op, request.size_bytes, request.num_chunks,
                                                        request.scheduler, request.themis),
                                   options);
  if (request.scheduler.kind == sched::SchedulerKind::kIdeal) {
    // Ideal: every dimension busy for the whole (ideal) time, bytes in proportion to bandwidth.
    auto& r = run.result;
    const double total_bw = network.total_bandwidth_gbps();
    const double bytes = sched::ideal_bytes_per_npu(network, request.op, request.size_bytes);
    r.time_ns = r.ideal_time_ns;
    r.avg_bw_utilization = 1.0;
    r.stages.clear();
    for (size_t k = 0; k < network.dims.size(); ++k) {
      r.dims[k].bytes_per_npu = bytes * network.dims[k].aggregate_bandwidth_gbps() / total_bw;
      r.dims[k].busy_ns = r.dims[k].active_ns = r.time_ns;
      r.dims[k].utilization = 1.0;
      r.active_intervals[k] = {{0.0, r.time_ns}};
    }
  }
  return run;
}

}  // namespace chorus::sim
