#include "eval/shared_fabric_study.h"

#include <fmt/format.h>

#include "core/json_csv.h"
#include "core/plot_call.h"
#include "core/text_file.h"
#include "eval/study_runs.h"
#include "sim/jobs/job_mix.h"
#include "sim/jobs/time_shift.h"

namespace chorus::eval {

net::GraphNetwork two_racks_fabric() {
  net::GraphNetwork g;
  g.name = "two-racks";
  g.servers = 8;
  g.switches = 2;
  for (int s = 0; s < 8; ++s) {
    const int tor = s < 4 ? 8 : 9;
    g.add_link(s, tor, 100.0);
    g.add_link(tor, s, 100.0);
  }
  g.add_link(8, 9, 100.0);
  g.add_link(9, 8, 100.0);
  return g;
}

namespace {

using sim::jobs::PlacementPolicy;

sim::jobs::JobSpec study_job(const std::string& name, const std::string& workload, int iterations) {
  sim::jobs::JobSpec job;
  job.name = name;
  job.workload = workload;
  job.npus = 4;
  job.iterations = iterations;
  job.at = job.placement_at = "reproduce shared-fabric: job " + name;
  return job;
}

}  // namespace

SharedFabricStudy run_shared_fabric_study(int iterations, int shift_steps, const Progress& progress, int workers) {
  SharedFabricStudy study;
  study.iterations = iterations;
  study.shift_steps = shift_steps;
  const auto fabric = two_racks_fabric();
  const std::vector<std::pair<std::string, std::string>> pairs{
      {"resnet152", "resnet152"}, {"gnmt", "gnmt"}, {"resnet152", "gnmt"}};
  const std::vector<std::string> placements{"contiguous", "topology-aware", "random", "interleaved"};
  // Every job mix on the pool.
  std::vector<std::pair<std::size_t, std::string>> tasks;  // pair, placement
  std::vector<StudyRun> runs;
  for (std::size_t p = 0; p < pairs.size(); ++p)
    for (const auto& placement : placements) {
      tasks.emplace_back(p, placement);
      runs.push_back({{{"workloads", pairs[p].first + "+" + pairs[p].second}, {"placement", placement}},
                      pairs[p].first + "+" + pairs[p].second + " " + placement});
    }
  study.rows.resize(tasks.size());
  run_study(
      runs, workers,
      [&](std::size_t i) {
        const auto& [wa, wb] = pairs[tasks[i].first];
        const auto& placement = tasks[i].second;
        sim::jobs::JobsFile file;
        file.source = "reproduce shared-fabric";
        // ResNet-152's iteration is about a fifth of GNMT's: 5x the iterations keep the jobs running
        // for about as long, so that a shift cannot simply move one job past the other's end.
        const auto its = [&](const std::string& w) { return w == "resnet152" ? 5 * iterations : iterations; };
        file.jobs = {study_job("a", wa, its(wa)), study_job("b", wb, its(wb))};
        if (placement == "topology-aware") {
          for (auto& j : file.jobs) j.policy = PlacementPolicy::kTopologyAware;
        } else if (placement == "random") {
          for (auto& j : file.jobs) j.policy = PlacementPolicy::kRandom;
          file.jobs[0].seed = 1;
          file.jobs[1].seed = 2;
        } else if (placement == "interleaved") {  // two servers of each rack per job
          file.jobs[0].policy = file.jobs[1].policy = PlacementPolicy::kExplicit;
          file.jobs[0].servers = {0, 1, 4, 5};
          file.jobs[1].servers = {2, 3, 6, 7};
        }
        const auto mix = sim::jobs::make_job_mix(file, fabric);
        const auto run = sim::jobs::run_job_mix(mix);
        sim::jobs::ShiftSearchOptions o;
        o.steps = shift_steps;
        const auto shifts = sim::jobs::search_time_shifts(mix.fabric, mix.jobs, run.alone, o);
        SharedFabricRow row;
        row.workloads = wa + "+" + wb;
        row.placement = placement;
        row.servers_a = mix.jobs[0].servers;
        row.servers_b = mix.jobs[1].servers;
        row.alone_a_ns = run.alone[0].result.total_ns / run.alone[0].result.iterations;
        row.alone_b_ns = run.alone[1].result.total_ns / run.alone[1].result.iterations;
        row.slowdown_a = shifts.unshifted_slowdowns[0];
        row.slowdown_b = shifts.unshifted_slowdowns[1];
        row.shifted_slowdown_a = shifts.slowdowns[0];
        row.shifted_slowdown_b = shifts.slowdowns[1];
        row.shift_b_ns = shifts.shifts_ns[1];
        row.evaluations = shifts.evaluations;
        study.rows[i] = row;
      },
      progress);
  return study;
}

std::string format_shared_fabric_table(const SharedFabricStudy& study) {
  std::string out = fmt::format(
      "Two 4-NPU jobs on two racks of four servers (one 100 Gb/s link between the ToRs), {} iterations of GNMT, 5x as "
      "many "
      "of ResNet-152;\n"
      "slowdown = iteration time together / alone on the same servers; shift: the second job's start, searched "
      "over {} shifts per iteration\n",
      study.iterations, study.shift_steps);
  out += fmt::format("{:<20} {:<15} {:<12} {:<12} {:>9} {:>9} {:>9} {:>11} {:>11} {:>10}\n", "jobs a+b", "placement",
                     "servers a", "servers b", "slow a", "slow b", "total", "shifted a", "shifted b", "shift ms");
  for (const auto& r : study.rows)
    out += fmt::format("{:<20} {:<15} {:<12} {:<12} {:>9.3f} {:>9.3f} {:>9.3f} {:>11.3f} {:>11.3f} {:>10.3f}\n",
                       r.workloads, r.placement, fmt::format("{}", fmt::join(r.servers_a, ",")),
                       fmt::format("{}", fmt::join(r.servers_b, ",")), r.slowdown_a, r.slowdown_b,
                       r.slowdown_a + r.slowdown_b, r.shifted_slowdown_a, r.shifted_slowdown_b, r.shift_b_ns / 1e6);
  return out;
}

std::vector<std::string> write_shared_fabric_outputs(const SharedFabricStudy& study, const std::string& out_dir) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : study.rows)
    rows.push_back({{"workloads", r.workloads},
                    {"placement", r.placement},
                    {"servers_a", r.servers_a},
                    {"servers_b", r.servers_b},
                    {"alone_iteration_a_ns", r.alone_a_ns},
                    {"alone_iteration_b_ns", r.alone_b_ns},
                    {"slowdown_a", r.slowdown_a},
                    {"slowdown_b", r.slowdown_b},
                    {"shifted_slowdown_a", r.shifted_slowdown_a},
                    {"shifted_slowdown_b", r.shifted_slowdown_b},
                    {"shift_b_ns", r.shift_b_ns},
                    {"simulations", r.evaluations}});
  const nlohmann::json j{
      {"fabric", "two-racks"}, {"iterations", study.iterations}, {"shift_steps", study.shift_steps}, {"rows", rows}};
  OutputDir out(out_dir);
  out.write("shared_fabric.json", j.dump(2) + "\n");
  out.write("shared_fabric.csv", json_to_csv(j, "rows"));
  out.write("shared_fabric.txt", format_shared_fabric_table(study));
  for (auto& f : draw_figures("shared-fabric", out_dir)) out.written().push_back(std::move(f));
  return out.written();
}

}  // namespace chorus::eval
