#include "eval/topoopt_iterations.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "core/cost_estimate.h"
#include "core/error.h"
#include "core/plot_call.h"
#include "core/text_file.h"
#include "core/worker_pool.h"
#include "eval/study_runs.h"
#include "eval/topoopt_fabrics.h"
#include "sim/flow_network.h"
#include "topoopt/coopt/job.h"
#include "topoopt/dag_traffic.h"
#include "workload/parallelism.h"
#include "workload/zoo.h"

namespace chorus::eval {
namespace {

topoopt::ServerSpec server_spec(const IterationStudyOptions& o) {
  return {o.gpus_per_server, o.gpu_tflops, o.gpu_memory_gbs};
}

// A model's DAG on the study's cluster, and its traffic (TopologyFinder's input).
struct StudyJob {
  net::Network logical;
  workload::Dag dag;
  topoopt::Traffic traffic;
  workload::ComputeModel compute;
};

StudyJob make_job(const std::string& model, const IterationStudyOptions& o) {
  const auto server = topoopt::server_job(model, o.servers, server_spec(o), o.iterations, "models");
  StudyJob job;
  job.logical = workload::logical_network(server.parallelism, o.servers);
  job.dag = workload::build_training_dag(server.model, server.parallelism, job.logical);
  job.traffic = topoopt::traffic_from_dag(job.dag, job.logical);
  job.compute = server.compute;
  return job;
}

IterationRow run_on(const StudyJob& job, const std::string& model, const std::string& name, int degree, double gbps,
                    const IterationStudyOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto fabric =
      job_fabric(name, o.servers, degree, gbps, job.traffic, o.seed, "fabrics", o.reconfig_latency_us * 1e3);
  sim::FlowNetworkOptions flow_options;
  flow_options.batch_tolerance = o.batch_tolerance;
  flow_options.reconfiguration = fabric.reconfiguration;
  if (flow_options.reconfiguration) flow_options.reconfiguration->on_demand = o.reconfig_on_demand;
  const auto run = sim::simulate_workload(job.dag, job.logical, fabric.graph, job.compute, flow_options);
  IterationRow row;
  row.model = model;
  row.fabric = name;
  row.servers = o.servers;
  row.degree = degree;
  row.bandwidth_gbps = gbps;
  row.server_gbps = fabric.server_gbps;
  const double it = run.result.iterations;
  row.iteration_ns = run.result.total_ns / it;
  row.compute_ns = run.result.compute_ns / it;
  row.exposed_dp_ns = run.result.exposed_dp_comm_ns / it;
  row.exposed_mp_ns = run.result.exposed_mp_comm_ns / it;
  row.flows = static_cast<std::int64_t>(run.flow_count);
  row.reallocations = run.flows.reallocations;
  row.full_reallocations = run.flows.full_reallocations;
  row.refilled_flows = run.flows.refilled_flows;
  row.refilled_bundles = run.flows.refilled_bundles;
  row.max_link_utilization = sim::link_utilization(run).max;
  row.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (fabric.reconfiguration) {
    row.reconfig_latency_us = fabric.reconfiguration->latency_ns / 1e3;  // SiP-ML's own 25 us, or the option
    row.reconfigurations = run.reconfigurations;
  }
  return row;
}

}  // namespace

IterationRow run_iteration(const std::string& model, const std::string& fabric, int degree, double gbps,
                           const IterationStudyOptions& options) {
  return run_on(make_job(model, options), model, fabric, degree, gbps, options);
}

IterationStudy run_iteration_study(const IterationStudyOptions& o) {
  IterationStudy study;
  study.options = o;
  const auto fabrics = o.fabrics.empty() ? iteration_fabric_names() : o.fabrics;
  const auto& known = iteration_fabric_names();
  for (const auto& name : fabrics)
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw InputError("fabrics", fmt::format("unknown fabric '{}'; choose from: {}", name, fmt::join(known, ", ")));
  for (const auto& model : o.models)
    topoopt::server_job(model, o.servers, server_spec(o), 1, "models");  // unknown names fail before any run
  if (!o.reconfig_latencies_us.empty())
    for (const auto& model : o.reconfig_models) topoopt::server_job(model, o.servers, server_spec(o), 1, "models");
  for (double l : o.reconfig_latencies_us)
    if (!(l >= 0)) throw InputError("reconfig_latencies_us", fmt::format("must be >= 0 us, got {}", l));
  const int reconfig_runs = o.reconfig_latencies_us.empty() || o.degrees.empty()
                                ? 0
                                : static_cast<int>(o.reconfig_models.size() * (o.reconfig_latencies_us.size() + 1));
  const int total =
      static_cast<int>(o.models.size() * o.degrees.size() * o.bandwidths.size() * fabrics.size()) + reconfig_runs;
  // Every run as a task: the grid's (model x degree x bandwidth x fabric), then Fig. 15's.
  struct Task {
    std::size_t job;  // index into jobs
    std::string fabric;
    int degree;
    double gbps;
    IterationStudyOptions options;  // Fig. 15's with its latency
    bool reconfig;
  };
  std::vector<StudyJob> jobs;
  std::vector<std::string> job_models;
  const auto job_of = [&](const std::string& model) {
    for (std::size_t i = 0; i < job_models.size(); ++i)
      if (job_models[i] == model) return i;
    jobs.push_back(make_job(model, o));
    job_models.push_back(model);
    return jobs.size() - 1;
  };
  std::vector<Task> tasks;
  for (const auto& model : o.models)
    for (int d : o.degrees)
      for (double b : o.bandwidths)
        for (const auto& name : fabrics) tasks.push_back({job_of(model), name, d, b, o, false});
  if (reconfig_runs > 0)
    for (const auto& model : o.reconfig_models) {
      tasks.push_back({job_of(model), "topoopt-oneshot", o.degrees.front(), o.reconfig_gbps, o, true});
      for (double l : o.reconfig_latencies_us) {
        tasks.push_back({job_of(model), "topoopt-reconfig", o.degrees.front(), o.reconfig_gbps, o, true});
        tasks.back().options.reconfig_latency_us = l;
      }
    }
  const auto values = [&](const Task& t) {
    return ParamValues{{"model", job_models[t.job]},
                       {"fabric", t.fabric},
                       {"degree", std::to_string(t.degree)},
                       {"gbps", fmt::format("{}", t.gbps)},
                       {"latency", t.reconfig ? fmt::format("{}", t.options.reconfig_latency_us) : ""}};
  };
  std::vector<IterationRow> rows(tasks.size());
  std::vector<bool> finished(tasks.size(), false);
  using Clock = std::chrono::steady_clock;
  std::vector<std::optional<Clock::time_point>> started(tasks.size());
  std::mutex mutex;  // guards done, finished, started, costs and the progress callback
  int done = 0;
  CostEstimate costs;
  const std::atomic<bool> never{false};
  // Fig. 15's runs are taken first: the two at the shortest reconfiguration latencies take a fifth
  // and a sixth of the whole study on one worker, and one started late would run alone at the end
  // (2 workers: 180 s against 276 s on one; 160 s with them first, docs/sweeps.md). Then the
  // grid's, in a spread order (eval/study_runs.h) so that the first grid runs sample every model,
  // fabric, degree and bandwidth and the time left holds; the rows keep the grid's order.
  const auto grid_runs = tasks.size() - static_cast<std::size_t>(reconfig_runs);
  std::vector<std::size_t> order;
  for (const std::size_t k : spread_order(static_cast<std::size_t>(reconfig_runs))) order.push_back(grid_runs + k);
  for (const std::size_t k : spread_order(grid_runs)) order.push_back(k);
  run_pool(tasks.size(), o.workers, never, [&](std::size_t taken) {
    const std::size_t i = order[taken];
    const auto& t = tasks[i];
    {
      const std::lock_guard<std::mutex> lock(mutex);
      started[i] = Clock::now();
    }
    rows[i] = run_on(jobs[t.job], job_models[t.job], t.fabric, t.degree, t.gbps, t.options);
    const std::lock_guard<std::mutex> lock(mutex);
    finished[i] = true;
    costs.add(values(t), rows[i].wall_s);
    ++done;
    if (!o.progress) return;
    // The runs queued and those in flight (a long one may have outlived its prediction).
    const auto now = Clock::now();
    std::vector<double> queued;
    std::vector<RunInFlight> in_flight;
    for (std::size_t k = 0; k < tasks.size(); ++k) {
      if (finished[k]) continue;
      const double predicted = costs.predict(values(tasks[k]));
      if (started[k])
        in_flight.push_back({predicted, std::chrono::duration<double>(now - *started[k]).count()});
      else
        queued.push_back(predicted);
    }
    o.progress(rows[i], done, total, time_left_s(queued, in_flight, o.workers));
  });
  study.rows.assign(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(grid_runs));
  study.reconfig_rows.assign(rows.begin() + static_cast<std::ptrdiff_t>(grid_runs), rows.end());
  // Per (model, degree): each fabric's mean over the bandwidths of its time over TopoOpt-oneshot's.
  std::size_t r = 0;
  for (const auto& model : o.models)
    for (int d : o.degrees) {
      std::map<std::string, std::vector<double>> times;  // fabric -> per bandwidth
      for (std::size_t b = 0; b < o.bandwidths.size(); ++b)
        for (const auto& name : fabrics) times[name].push_back(study.rows[r++].iteration_ns);
      const auto topo = times.find("topoopt-oneshot");
      if (topo == times.end()) continue;
      for (const auto& name : fabrics) {
        double sum = 0;
        for (std::size_t i = 0; i < o.bandwidths.size(); ++i) sum += times[name][i] / topo->second[i];
        study.ratios.push_back({model, d, name, sum / static_cast<double>(o.bandwidths.size())});
      }
    }
  return study;
}

std::vector<std::string> write_iteration_outputs(const IterationStudy& study, const std::string& dir) {
  OutputDir out(dir);
  std::string csv =
      "model,fabric,servers,degree,bandwidth_gbps,server_gbps,iteration_ms,compute_ms,exposed_dp_ms,exposed_mp_ms,"
      "flows,"
      "reallocations,max_link_utilization,wall_s\n";
  for (const auto& r : study.rows)
    csv += fmt::format("{},{},{},{},{},{},{:.6f},{:.6f},{:.6f},{:.6f},{},{},{:.4f},{:.3f}\n", r.model, r.fabric,
                       r.servers, r.degree, r.bandwidth_gbps, r.server_gbps, r.iteration_ns / 1e6, r.compute_ns / 1e6,
                       r.exposed_dp_ns / 1e6, r.exposed_mp_ns / 1e6, r.flows, r.reallocations, r.max_link_utilization,
                       r.wall_s);
  out.write("iterations.csv", csv);
  if (!study.reconfig_rows.empty()) {
    std::string rc =
        "model,fabric,servers,degree,bandwidth_gbps,reconfig_latency_us,iteration_ms,reconfigurations,wall_s\n";
    for (const auto& r : study.reconfig_rows)
      rc += fmt::format("{},{},{},{},{},{},{:.6f},{},{:.3f}\n", r.model, r.fabric, r.servers, r.degree,
                        r.bandwidth_gbps, r.reconfig_latency_us, r.iteration_ns / 1e6, r.reconfigurations, r.wall_s);
    out.write("reconfig.csv", rc);
  }
  for (auto& f : draw_figures("topoopt-iterations", dir)) out.written().push_back(std::move(f));
  return out.written();
}

std::string format_iteration_table(const IterationStudy& study) {
  const auto& o = study.options;
  const auto fabrics = o.fabrics.empty() ? iteration_fabric_names() : o.fabrics;
  std::string out = fmt::format(
      "Figs. 12-13: training iteration time, ms ({} servers of {} GPUs; flow-level model; docs/topoopt.md)\n",
      o.servers, o.gpus_per_server);
  for (const auto& model : o.models)
    for (int d : o.degrees) {
      out += fmt::format("\n{}, d = {}\n{:<26}", model, d, "fabric \\ B (Gb/s)");
      for (double b : o.bandwidths) out += fmt::format(" {:>10}", b);
      out += fmt::format(" {:>12}\n", "/ topoopt");
      for (const auto& name : fabrics) {
        out += fmt::format("{:<26}", name);
        for (const auto& r : study.rows)
          if (r.model == model && r.degree == d && r.fabric == name)
            out += fmt::format(" {:>10.3f}", r.iteration_ns / 1e6);
        for (const auto& q : study.ratios)
          if (q.model == model && q.degree == d && q.fabric == name)
            out += fmt::format(" {:>11.2f}x", q.mean_over_topoopt);
        out += "\n";
      }
    }
  if (!study.reconfig_rows.empty()) {
    out += fmt::format("\nFig. 15: TopoOpt-reconfig over the OCS reconfiguration latency (d = {}, B = {} Gb/s), ms\n",
                       study.reconfig_rows.front().degree, study.reconfig_rows.front().bandwidth_gbps);
    for (const auto& r : study.reconfig_rows)
      out += r.fabric == "topoopt-oneshot"
                 ? fmt::format("{:<16} oneshot {:>10.3f}\n", r.model, r.iteration_ns / 1e6)
                 : fmt::format("{:<16} reconfig {:>8g} us: {:>10.3f}  ({} reconfigurations)\n", r.model,
                               r.reconfig_latency_us, r.iteration_ns / 1e6, r.reconfigurations);
  }
  return out;
}

}  // namespace chorus::eval
