#include "eval/capture_whatif.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/plot_call.h"
#include "core/text_file.h"
#include "sched/scheduler.h"
#include "sim/dag_executor.h"
#include "sim/flow_network.h"
#include "workload/capture/capture_import.h"
#include "workload/capture/capture_manifest.h"
#include "workload/compute_scale.h"
#include "workload/load.h"

namespace chorus::eval {

namespace {

WhatIfRow row_of(const WhatIfNetwork& n, const std::string& shape, long long npus, long long world,
                 const std::string& scheduler, const sim::DagResult& r) {
  const double it = r.iterations;
  WhatIfRow row;
  row.network = n.label;
  row.shape = shape;
  row.npus = npus;
  row.world = world;
  row.scheduler = scheduler;
  row.iteration_ns = r.total_ns / it;
  row.compute_ns = r.compute_ns / it;
  row.exposed_comm_ns = r.exposed_comm_ns / it;
  row.bytes_per_npu = r.bytes_per_npu / it;
  return row;
}

}  // namespace

WhatIfStudy run_capture_whatif(const WhatIfConfig& config) {
  if (config.networks.empty()) throw InputError("topology", "give at least one network");
  if (config.schedulers.empty()) throw InputError("scheduler", "give at least one scheduler");
  if (config.world < 0) throw InputError(config.world_field, fmt::format("must be >= 1, got {}", config.world));
  std::vector<sched::SchedulerSpec> schedulers;
  for (const auto& s : config.schedulers) schedulers.push_back(sched::parse_scheduler(s, "scheduler"));
  WhatIfStudy study;
  study.config = config;
  const auto manifest = workload::capture::read_manifest(config.capture);
  study.captured_world = manifest.world;
  study.first_step = manifest.first_step;
  study.last_step = manifest.last_step;
  for (const auto& n : config.networks) {
    const long long npus = n.dims ? static_cast<long long>(n.dims->num_npus()) : n.fabric ? n.fabric->servers : 0;
    if (npus == 0) throw InputError(n.label, "neither a dimension network nor a fabric");
    if (config.world == 0 && npus % manifest.world != 0)
      throw InputError(n.label, fmt::format("{} NPUs, not a multiple of the capture's {} ranks: without a world, the "
                                            "capture is replicated to fill each network",
                                            npus, manifest.world));
    workload::LoadOptions o;
    o.iterations = config.iterations;
    o.world = config.world == 0 ? static_cast<int>(npus) : config.world;
    o.world_field = config.world == 0 ? n.label : config.world_field;
    o.grow_groups = config.grow_groups;
    o.grow_field = config.grow_field;
    const net::Network logical =
        n.dims ? *n.dims
               : workload::capture::fabric_logical_network(manifest, static_cast<int>(npus), config.grow_groups);
    auto loaded = workload::load(config.capture, logical, o, "capture");
    if (study.notes.empty()) study.notes = loaded.notes;
    workload::scale_compute(loaded.dag, config.compute_scale, "compute_scale");
    if (n.fabric) {
      const auto run = sim::simulate_workload(loaded.dag, logical, *n.fabric, config.compute);
      study.rows.push_back(row_of(n, logical.shape(), npus, o.world, "flow", run.result));
      continue;
    }
    for (const auto& s : schedulers) {
      sim::WorkloadSimOptions options;
      options.scheduler = s;
      options.chunks_per_collective = config.chunks;
      options.compute = config.compute;
      const auto run = sim::simulate_workload(loaded.dag, logical, options);
      study.rows.push_back(row_of(n, logical.shape(), npus, o.world, s.name, run.result));
    }
  }
  return study;
}

std::vector<std::string> write_whatif_outputs(const WhatIfStudy& study, const std::string& dir) {
  OutputDir out(dir);
  std::string csv = "network,shape,npus,world,scheduler,iteration_time_ns,compute_ns,exposed_comm_ns,bytes_per_npu\n";
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& r : study.rows) {
    csv += fmt::format("{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.1f}\n", r.network, r.shape, r.npus, r.world, r.scheduler,
                       r.iteration_ns, r.compute_ns, r.exposed_comm_ns, r.bytes_per_npu);
    rows.push_back({{"network", r.network},
                    {"shape", r.shape},
                    {"npus", r.npus},
                    {"world", r.world},
                    {"scheduler", r.scheduler},
                    {"iteration_time_ns", r.iteration_ns},
                    {"compute_ns", r.compute_ns},
                    {"exposed_comm_ns", r.exposed_comm_ns},
                    {"bytes_per_npu", r.bytes_per_npu}});
  }
  out.write("whatif.csv", csv);
  const auto& c = study.config;
  nlohmann::ordered_json j{{"capture", c.capture},
                           {"captured_world", study.captured_world},
                           {"steps", {study.first_step, study.last_step}},
                           {"world", c.world},
                           {"grow_groups", c.grow_groups},
                           {"compute_scale", c.compute_scale},
                           {"iterations", c.iterations},
                           {"chunks", c.chunks},
                           {"rows", rows}};
  out.write("whatif.json", j.dump(2) + "\n");
  for (auto& f : draw_figures("capture-whatif", dir)) out.written().push_back(std::move(f));
  return out.written();
}

std::string format_whatif_table(const WhatIfStudy& study) {
  const auto& c = study.config;
  std::string out =
      fmt::format("capture {} ({} ranks), {}{}, compute x{:g}; per iteration (the window, steps {}..{}{}), ms:\n",
                  c.capture, study.captured_world,
                  c.world ? fmt::format("replicated to {} ranks", c.world) : "replicated to each network's NPUs",
                  c.grow_groups.empty() ? "" : fmt::format(" growing {}", fmt::join(c.grow_groups, ",")),
                  c.compute_scale, study.first_step, study.last_step - 1,
                  c.iterations == 1 ? "" : fmt::format("; the mean of {} iterations", c.iterations));
  out += fmt::format("  {:<28} {:>7} {:<12} {:>12} {:>12} {:>12} {:>8}\n", "network", "world", "scheduler", "iteration",
                     "compute", "exposed comm", "exposed");
  for (const auto& r : study.rows)
    out += fmt::format("  {:<28} {:>7} {:<12} {:>12.3f} {:>12.3f} {:>12.3f} {:>7.1f}%\n", r.network, r.world,
                       r.scheduler, r.iteration_ns / 1e6, r.compute_ns / 1e6, r.exposed_comm_ns / 1e6,
                       r.iteration_ns > 0 ? 100 * r.exposed_comm_ns / r.iteration_ns : 0.0);
  return out;
}

}  // namespace chorus::eval
