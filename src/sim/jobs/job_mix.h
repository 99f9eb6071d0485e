#pragma once
// A job mix from its file to its results (`chorus sim jobs`): the jobs' workloads built as training
// DAGs on their NPUs, placed on the fabric, run together on it and each alone on the same servers;
// per job iteration times, slowdown and exposed communication, per link utilization.
#include <vector>

#include <nlohmann/json.hpp>

#include "net/graph/graph_network.h"
#include "sim/jobs/job_spec.h"
#include "sim/jobs/shared_fabric.h"

namespace chorus::sim::jobs {

struct JobMix {
  net::GraphNetwork fabric;
  std::vector<JobSpec> specs;
  std::vector<SharedJob> jobs;               // in file order
  std::vector<TimedLinkFault> timed_faults;  // link faults during the run (together and alone alike)
};

// The fabric with the file's link faults applied (net::apply_link_faults: routes avoid links that
// are down; faults during the run are checked against it and kept in timed_faults). Loads each
// job's workload with workload::load (a model with its compute model on its logical network; an
// ASTRA-sim, Chakra or execution-graph import on the job's `network`, or one dimension of its
// NPUs; pipelines are refused: the flow-level model runs one stage), places the jobs (place_jobs)
// and applies their speeds. InputError naming the job.
JobMix make_job_mix(const JobsFile& file, const net::GraphNetwork& fabric);

struct JobMixResult {
  SharedFabricRun together;
  std::vector<JobTimeline> alone;  // per job: the same job on the same servers with the fabric to itself
};

// link_window_ns > 0: the run together also records each link's bytes per window (utilization over time).
JobMixResult run_job_mix(const JobMix& mix, double batch_tolerance = 0.0, double link_window_ns = 0.0);

// Utilization over time, one row per window and link that carried traffic in the run together:
// window_start_ns, window_end_ns, link, from, to, gbps, bytes, utilization = bytes / (capacity x
// window). Needs run_job_mix with link_window_ns > 0 (else InputError naming `field`).
std::string link_windows_csv(const JobMixResult& result, const std::string& field);

// {fabric{...}, makespan_ns, jobs[{name, workload, npus, placement, servers, start_ns, iterations,
// iteration_time_ns, iteration_times_ns[], alone_iteration_time_ns, slowdown, compute_ns,
// exposed_comm_ns, ...}], links[{link, from, to, gbps, bytes, busy_ns, utilization}]} (per iteration
// means; the links that carried traffic).
nlohmann::json to_json(const JobMix& mix, const JobMixResult& result);

}  // namespace chorus::sim::jobs
