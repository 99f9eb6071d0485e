// chorus sim jobs: several training jobs sharing one graph fabric (docs/shared-fabric.md)
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "apps/chorus/commands.h"
#include "apps/chorus/sim_jobs_run.h"
#include "apps/chorus/output_checks.h"
#include "core/error.h"
#include "core/json_csv.h"
#include "core/plot_call.h"
#include "core/text_file.h"
#include "net/graph/from_network.h"
#include "net/graph/graph_yaml.h"
#include "net/network_yaml.h"
#include "net/presets.h"
#include "sim/flow/flow_model.h"
#include "sim/jobs/job_mix.h"
#include "sim/jobs/time_shift.h"

namespace chorus::cli {
namespace {

std::string ms3(double ns) { return fmt::format("{:.3f}", ns / 1e6); }

void print_table(const sim::jobs::JobMix& mix, const sim::jobs::JobMixResult& r, const nlohmann::json& j) {
  const auto& run = r.together;
  fmt::print(
      "{} jobs on fabric {} ({} servers, {} switches, {} links), flow-level model: their flows share links max-min "
      "fairly\n",
      mix.jobs.size(), run.fabric.name, run.fabric.servers, run.fabric.switches, run.fabric.links.size());
  fmt::print("{:<12} {:<16} {:>5} {:<15} {:>10} {:>12} {:>12} {:>9} {:>12} {:>12}\n", "job", "workload", "NPUs",
             "placement", "start ms", "iter ms", "alone ms", "slowdown", "compute ms", "exposed ms");
  for (const auto& job : j["jobs"])
    fmt::print("{:<12} {:<16} {:>5} {:<15} {:>10} {:>12} {:>12} {:>9.3f} {:>12} {:>12}\n",
               job["name"].get<std::string>(), job["workload"].get<std::string>(), job["npus"].get<int>(),
               job["placement"].get<std::string>(), ms3(job["start_ns"]), ms3(job["iteration_time_ns"]),
               ms3(job["alone_iteration_time_ns"]), job["slowdown"].get<double>(), ms3(job["compute_ns"]),
               ms3(job["exposed_comm_ns"]));
  fmt::print(
      "(per iteration, mean over each job's iterations; alone = the same job on the same servers with the fabric to "
      "itself)\n");
  double max_u = 0, sum_u = 0;
  const nlohmann::json* busiest = nullptr;
  for (const auto& l : j["links"]) {
    sum_u += l["utilization"].get<double>();
    if (!busiest || l["utilization"].get<double>() > max_u) {
      max_u = l["utilization"].get<double>();
      busiest = &l;
    }
  }
  const auto used = j["links"].size();
  fmt::print("links: {} of {} carried traffic over {} ms; utilization mean {:.1f} %, max {:.1f} %", used,
             run.fabric.links.size(), ms3(run.makespan_ns), used ? 100 * sum_u / static_cast<double>(used) : 0.0,
             100 * max_u);
  if (busiest)
    fmt::print(" (link {}: {} -> {})", (*busiest)["link"].get<int>(), (*busiest)["from"].get<int>(),
               (*busiest)["to"].get<int>());
  fmt::print("\n");
}

void run_sim_jobs(const SimJobsArgs& a) {
  if (a.plot && a.out.empty()) throw InputError("--plot", "needs --out DIR (the figure is drawn from DIR/jobs.json)");
  const auto run = simulate_jobs(a);
  const auto& mix = run.mix;
  const auto& result = run.result;
  const auto& shifts = run.shifts;
  const auto& j = run.json;
  if (!a.out.empty()) {
    OutputDir out(a.out);
    out.write("jobs.json", j.dump(2) + "\n");
    nlohmann::json per_job = j;
    for (auto& job : per_job["jobs"]) job.erase("iteration_times_ns");
    per_job.erase("links");
    out.write("jobs.csv", json_to_csv(per_job, "jobs", "job."));
    nlohmann::json per_link = j;
    per_link.erase("jobs");
    out.write("links.csv", json_to_csv(per_link, "links", "link."));
    out.write("links_over_time.csv", sim::jobs::link_windows_csv(result, "--link-window-ms"));
    if (a.plot)
      for (auto& f : draw_figures("jobs", a.out)) out.written().push_back(std::move(f));
  }
  if (a.json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  print_table(mix, result, j);
  if (shifts) {
    fmt::print(
        "time shifts ({} per job's iteration alone, {} rounds, {} simulations): total slowdown {:.3f} unshifted -> "
        "{:.3f}\n",
        a.shifts.steps, a.shifts.rounds, shifts->evaluations, shifts->unshifted_total_slowdown, shifts->total_slowdown);
    for (std::size_t k = 0; k < mix.jobs.size(); ++k)
      fmt::print("  {:<12} start {:>10} ms + shift {:>10} ms: slowdown {:.3f} (unshifted {:.3f})\n", mix.jobs[k].name,
                 ms3(mix.jobs[k].start_ns), ms3(shifts->shifts_ns[k]), shifts->slowdowns[k],
                 shifts->unshifted_slowdowns[k]);
  }
  if (!a.out.empty())
    fmt::print("wrote {}/jobs.json, jobs.csv, links.csv, links_over_time.csv{}\n", a.out, a.plot ? ", jobs.svg" : "");
}

}  // namespace

// Everything `chorus sim jobs` does but its output (`chorus sweep` runs its points here).
SimJobsOutcome simulate_jobs(const SimJobsArgs& a) {
  sim::flow::check_batch_tolerance(a.batch_tolerance);
  a.shifts.validate();  // before the jobs run, not after
  const auto file = sim::jobs::load_jobs_yaml(a.jobs);
  const auto fabric_path = a.fabric.empty() ? file.fabric : a.fabric;
  if (fabric_path.empty()) throw InputError(a.jobs, "no fabric: give 'fabric: FILE' in the file or --fabric FILE");
  // A Themis preset by name or a network YAML (a dimension network) runs on its graph
  // (net::graph_of); a YAML with a 'fabric' key is a fabric.
  const auto fabric = [&] {
    if (const auto preset = net::find_preset(fabric_path)) return net::graph_of(*preset, fabric_path);
    if (std::filesystem::is_regular_file(fabric_path) && !net::is_fabric_file(fabric_path))
      return net::graph_of(net::load_network_file(fabric_path), fabric_path);
    return net::load_fabric_yaml(fabric_path);  // a fabric, or its error (no such file)
  }();
  auto mix = sim::jobs::make_job_mix(file, fabric);
  if (!(a.link_window_ms > 0 && a.link_window_ms <= 1e6))
    throw InputError("--link-window-ms", fmt::format("must be in (0, 1e6] ms, got {}", a.link_window_ms));
  auto result = sim::jobs::run_job_mix(mix, a.batch_tolerance, a.out.empty() ? 0.0 : a.link_window_ms * 1e6);
  auto j = sim::jobs::to_json(mix, result);
  std::optional<sim::jobs::ShiftSearchResult> shifts;
  if (a.search_shifts) {
    auto o = a.shifts;
    o.batch_tolerance = a.batch_tolerance;
    o.timed_faults = mix.timed_faults;
    shifts = sim::jobs::search_time_shifts(mix.fabric, mix.jobs, result.alone, o);
    j["shift_search"] = {{"steps", o.steps},
                         {"rounds", o.rounds},
                         {"evaluations", shifts->evaluations},
                         {"shifts_ns", shifts->shifts_ns},
                         {"slowdowns", shifts->slowdowns},
                         {"unshifted_slowdowns", shifts->unshifted_slowdowns},
                         {"total_slowdown", shifts->total_slowdown},
                         {"unshifted_total_slowdown", shifts->unshifted_total_slowdown}};
  }
  return {std::move(mix), std::move(result), std::move(shifts), std::move(j)};
}

void register_sim_jobs_command(CLI::App& sim) {
  auto args = std::make_shared<SimJobsArgs>();
  auto* c = sim.add_subcommand(
      "jobs", "Several training jobs sharing one graph fabric (flow-level model, docs/shared-fabric.md)");
  c->add_option("jobs", args->jobs, "Job mix YAML: fabric, and per job a workload, a placement and a start offset")
      ->required();
  c->add_option("--fabric", args->fabric,
                "Fabric YAML (`chorus topo fabric --save`), a network YAML or a Themis preset's name (their graph), "
                "instead of the file's 'fabric'");
  c->add_option(
       "-o,--out", args->out,
       "Write jobs.json, jobs.csv (a row per job), links.csv (a row per used link) and links_over_time.csv here")
      ->check(kWritableDir);
  c->add_option("--link-window-ms", args->link_window_ms,
                "With --out: links_over_time.csv gives each used link's utilization per window of this many ms")
      ->capture_default_str();
  c->add_flag("--plot", args->plot,
              "Also draw DIR/jobs.svg: iteration times together and alone, link utilization (matplotlib)");
  c->add_flag("--json", args->json, "Print one JSON object instead of a table");
  c->add_option("--batch-tolerance", args->batch_tolerance,
                "Finish flows within this fraction of their duration together (0: exact, docs/graph-networks.md)")
      ->capture_default_str();
  c->add_flag(
      "--search-shifts", args->search_shifts,
      "Search start shifts (CASSINI's idea) that minimise the jobs' total slowdown: coordinate descent over a grid");
  c->add_option("--shift-steps", args->shifts.steps, "Shifts tried per job: i / steps of its iteration time alone")
      ->capture_default_str();
  c->add_option("--shift-rounds", args->shifts.rounds, "Passes of the search over the jobs")->capture_default_str();
  c->callback([args] { run_sim_jobs(*args); });
}

}  // namespace chorus::cli
