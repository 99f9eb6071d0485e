#include "sim/jobs/job_mix.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "net/network_yaml.h"
#include "sim/flow_network.h"
#include "sim/jobs/placement.h"
#include "sim/stragglers.h"
#include "workload/compute_model.h"
#include "workload/load.h"
#include "workload/parallelism.h"

namespace chorus::sim::jobs {

namespace {

// The job's own dimension network (a YAML file or a preset), of exactly its NPUs.
net::Network job_network(const JobSpec& spec) {
  net::Network network;
  try {
    network = net::load_network(spec.network);
  } catch (const InputError& e) {
    throw InputError(spec.network_at,
                     fmt::format("job '{}': field 'network': {}: {}", spec.name, e.where(), e.detail()));
  }
  if (network.num_npus() != static_cast<std::uint64_t>(spec.npus))
    throw InputError(spec.network_at, fmt::format("job '{}': field 'network': '{}' has {} NPUs, the job {}", spec.name,
                                                  spec.network, network.num_npus(), spec.npus));
  return network;
}

}  // namespace

JobMix make_job_mix(const JobsFile& file, const net::GraphNetwork& fabric) {
  JobMix mix;
  mix.fabric = net::apply_link_faults(fabric, file.link_faults);
  mix.specs = file.jobs;
  mix.timed_faults = file.timed_link_faults;
  capacity_changes(net::merge_parallel_links(mix.fabric), mix.timed_faults);  // their errors before any simulation
  const auto servers = place_jobs(file.jobs, mix.fabric);
  for (std::size_t j = 0; j < file.jobs.size(); ++j) {
    const auto& spec = file.jobs[j];
    const auto where = fmt::format("{}: job '{}'", spec.at, spec.name);
    // Imports (ASTRA-sim text, Chakra, execution graphs) span the dimensions of a network: the
    // job's `network`, or one dimension of its NPUs; NPU i of it runs on the job's i-th server.
    const auto import_network =
        spec.network.empty() ? workload::logical_network(workload::ParallelismConfig{}, spec.npus) : job_network(spec);
    workload::LoadOptions options;
    options.iterations = spec.iterations;
    options.ns_per_cycle = spec.ns_per_cycle;
    auto loaded = workload::load(spec.workload, import_network, options, where + ": workload");
    SharedJob job;
    job.name = spec.name;
    workload::ComputeModel compute;
    if (loaded.model) {
      if (!spec.network.empty())
        throw InputError(spec.network_at,
                         fmt::format("job '{}': field 'network' applies to ASTRA-sim, Chakra and execution-graph "
                                     "workloads; a model's parallelism gives its network",
                                     spec.name));
      auto& entry = *loaded.model;
      if (workload::pipelined(entry.parallelism))
        throw InputError(
            where + ": workload",
            fmt::format("'{}' is pipelined; the flow-level model of a fabric runs one stage", spec.workload));
      job.logical = workload::logical_network(entry.parallelism, spec.npus);
      job.dag = workload::build_training_dag(entry.model, entry.parallelism, job.logical);
      compute = entry.parallelism.compute;
    } else {
      if (loaded.dag.stages != 1)
        throw InputError(where + ": workload",
                         fmt::format("'{}' has {} pipeline stages; the flow-level model of a fabric runs one",
                                     spec.workload, loaded.dag.stages));
      job.logical = import_network;
      job.dag = std::move(loaded.dag);
    }
    job.servers = servers[j];
    job.start_ns = spec.start_ns;
    std::vector<double> compute_ns(job.dag.nodes.size());
    for (std::size_t i = 0; i < compute_ns.size(); ++i) compute_ns[i] = compute.node_time_ns(job.dag.nodes[i]);
    job.compute_ns = straggler_compute_ns(job.dag, job.logical, std::move(compute_ns), spec.speeds, where + ": speeds");
    mix.jobs.push_back(std::move(job));
  }
  return mix;
}

JobMixResult run_job_mix(const JobMix& mix, double batch_tolerance, double link_window_ns) {
  JobMixResult r;
  std::vector<const SharedJob*> all;
  for (const auto& job : mix.jobs) all.push_back(&job);
  r.together = simulate_shared_fabric(mix.fabric, all, batch_tolerance, link_window_ns, mix.timed_faults);
  for (const auto& job : mix.jobs)
    r.alone.push_back(simulate_shared_fabric(mix.fabric, {&job}, batch_tolerance, 0.0, mix.timed_faults).jobs.front());
  return r;
}

std::string link_windows_csv(const JobMixResult& result, const std::string& field) {
  const auto& run = result.together;
  if (!(run.link_window_ns > 0))
    throw InputError(field, "the link windows were not recorded (run_job_mix without a window)");
  std::string csv = "window_start_ns,window_end_ns,link,from,to,gbps,bytes,utilization\n";
  const double w = run.link_window_ns;
  for (std::size_t i = 0; i < run.link_window_bytes.size(); ++i)
    for (std::size_t l = 0; l < run.fabric.links.size(); ++l) {
      if (!(run.flows.link_bytes[l] > 0)) continue;  // links that never carried traffic: no rows
      const auto& link = run.fabric.links[l];
      const double bytes = run.link_window_bytes[i][l];
      csv += fmt::format("{},{},{},{},{},{},{},{}\n", static_cast<double>(i) * w, static_cast<double>(i + 1) * w, l,
                         link.from, link.to, link.gbps, bytes, link.gbps > 0 ? bytes / (link.gbps / 8.0 * w) : 0.0);
    }
  return csv;
}

nlohmann::json to_json(const JobMix& mix, const JobMixResult& result) {
  const auto& run = result.together;
  nlohmann::json jobs = nlohmann::json::array();
  for (std::size_t j = 0; j < mix.jobs.size(); ++j) {
    const auto& spec = mix.specs[j];
    const auto& job = mix.jobs[j];
    const auto& r = run.jobs[j].result;
    const auto& alone = result.alone[j].result;
    const double it = r.iterations;
    jobs.push_back(
        {{"name", job.name},
         {"workload", job.dag.name},
         {"npus", job.servers.size()},
         {"logical_network", job.logical.shape()},
         {"placement", std::string(to_string(spec.policy))},
         {"servers", job.servers},
         {"start_ns", job.start_ns},
         {"end_ns", job.start_ns + r.total_ns},
         {"iterations", r.iterations},
         {"iteration_time_ns", r.total_ns / it},
         {"alone_iteration_time_ns", alone.total_ns / it},
         {"slowdown", alone.total_ns > 0 ? r.total_ns / alone.total_ns : 1.0},
         {"iteration_times_ns", run.jobs[j].iteration_ns},
         {"compute_ns", r.compute_ns / it},
         {"exposed_comm_ns", r.exposed_comm_ns / it},
         {"alone_exposed_comm_ns", alone.exposed_comm_ns / it},
         {"comm_active_ns", r.comm_active_ns / it},
         {"bytes_per_npu", r.bytes_per_npu / it},
         {"slowest_speed", spec.speeds.empty() ? 1.0 : *std::min_element(spec.speeds.begin(), spec.speeds.end())}});
  }
  nlohmann::json links = nlohmann::json::array();
  for (std::size_t l = 0; l < run.fabric.links.size(); ++l) {
    const double bytes = run.flows.link_bytes[l];
    if (bytes <= 0) continue;
    const auto& link = run.fabric.links[l];
    links.push_back({{"link", l},
                     {"from", link.from},
                     {"to", link.to},
                     {"gbps", link.gbps},
                     {"bytes", bytes},
                     {"busy_ns", run.flows.link_busy_ns[l]},
                     {"utilization", run.link_capacity_bytes[l] > 0 ? bytes / run.link_capacity_bytes[l] : 0.0}});
  }
  return {{"fabric",
           {{"name", run.fabric.name},
            {"servers", run.fabric.servers},
            {"switches", run.fabric.switches},
            {"links", run.fabric.links.size()},
            {"server_gbps", server_bandwidth_gbps(run.fabric)}}},
          {"makespan_ns", run.makespan_ns},
          {"flows", run.flow_count},
          {"jobs", jobs},
          {"links", links}};
}

}  // namespace chorus::sim::jobs
