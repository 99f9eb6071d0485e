#include "sim/jobs/shared_fabric.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "core/error.h"
#include "sim/flow_network.h"

namespace chorus::sim::jobs {

SharedFabricRun simulate_shared_fabric(const net::GraphNetwork& fabric, const std::vector<const SharedJob*>& jobs,
                                       double batch_tolerance, double link_window_ns,
                                       const std::vector<TimedLinkFault>& timed_faults) {
  SharedFlows shared(fabric, batch_tolerance);
  if (link_window_ns > 0) shared.record_link_windows(link_window_ns);
  const auto changes = capacity_changes(shared.fabric(), timed_faults);
  std::size_t next_change = 0;
  std::vector<std::unique_ptr<FlowNetwork>> nets;
  std::vector<std::unique_ptr<DagRun>> runs;
  for (const SharedJob* job : jobs) {
    if (job->dag.stages != 1)
      throw InputError(job->name,
                       fmt::format("{} pipeline stages; the flow-level model of a fabric runs one", job->dag.stages));
    workload::validate(job->dag, job->logical.num_dims(), job->name);
    nets.push_back(std::make_unique<FlowNetwork>(shared, job->logical, job->servers, job->name));
    runs.push_back(std::make_unique<DagRun>(job->dag, job->compute_ns, std::vector<NetworkModel*>{nets.back().get()},
                                            job->start_ns));
  }
  while (true) {
    DagRun* next = nullptr;
    double at = 0;
    for (auto& run : runs)
      if (!run->done() && (!next || run->next_event_ns() < at)) {
        next = run.get();
        at = run->next_event_ns();
      }
    if (!next) break;
    // A capacity change before the jobs' next event (or while every flow waits for a link that is
    // down: no event at all) comes first; on a tie, the jobs' events.
    if (next_change < changes.size() && changes[next_change].at_ns < at) {
      shared.set_capacities_at(std::max(changes[next_change].at_ns, shared.engine().now_ns()),
                               changes[next_change].gbps);
      ++next_change;
      continue;
    }
    if (!std::isfinite(at)) throw InputError(fabric.name, "flows wait for a link that never comes back");
    next->step();
  }
  SharedFabricRun out;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    JobTimeline t;
    t.result = runs[j]->finish(server_bandwidth_gbps(shared.fabric()));
    const auto& dag = jobs[j]->dag;
    std::vector<double> ends(static_cast<std::size_t>(dag.iterations), jobs[j]->start_ns);
    for (std::size_t i = 0; i < dag.nodes.size(); ++i) {
      auto& end = ends[static_cast<std::size_t>(std::clamp(dag.nodes[i].iteration, 0, dag.iterations - 1))];
      end = std::max(end, t.result.nodes[i].end_ns);
    }
    double before = jobs[j]->start_ns;
    for (double end : ends) {
      end = std::max(end, before);  // an iteration whose nodes all ended with the previous one's
      t.iteration_ns.push_back(end - before);
      before = end;
    }
    out.makespan_ns = std::max(out.makespan_ns, jobs[j]->start_ns + t.result.total_ns);
    out.jobs.push_back(std::move(t));
  }
  out.fabric = shared.fabric();
  out.flows = shared.engine().result();
  out.link_capacity_bytes = shared.engine().link_capacity_bytes(out.makespan_ns);
  out.flow_count = shared.engine().flows().size();
  out.link_window_ns = link_window_ns;
  out.link_window_bytes = shared.engine().link_window_bytes();
  return out;
}

}  // namespace chorus::sim::jobs
