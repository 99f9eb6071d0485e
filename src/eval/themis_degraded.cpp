#include "eval/themis_degraded.h"

#include <fmt/format.h>

#include "core/json_csv.h"
#include "core/text_file.h"
#include "eval/study_runs.h"
#include "net/degraded.h"
#include "net/presets.h"
#include "sim/run_collective.h"

namespace chorus::eval {

DegradedStudy run_themis_degraded(const DegradedConfig& config, const Progress& progress) {
  DegradedStudy study{config, {}};
  const auto topologies = net::table2_presets();
  // Every simulation on the pool: each topology's healthy Themis run, then each degraded dimension's three.
  struct Task {
    std::size_t topology;
    int dim;  // -1: the healthy run
    double fraction;
  };
  std::vector<Task> tasks;
  std::vector<StudyRun> runs;
  for (std::size_t t = 0; t < topologies.size(); ++t) {
    tasks.push_back({t, -1, 1.0});
    runs.push_back({{{"topology", topologies[t].name}, {"kind", "healthy"}}, topologies[t].name + " healthy"});
  }
  for (std::size_t t = 0; t < topologies.size(); ++t)
    for (int k = 0; k < topologies[t].num_dims(); ++k)
      for (double f : config.fractions) {
        tasks.push_back({t, k, f});
        runs.push_back({{{"topology", topologies[t].name}, {"kind", "degraded"}, {"fraction", fmt::format("{}", f)}},
                        fmt::format("{} dim {} at {:g}", topologies[t].name, k, f)});
      }
  const auto request = [&](const std::string& scheduler) {
    return sim::make_request(CollectiveKind::kAllReduce, config.size_bytes, config.chunks, scheduler);
  };
  std::vector<DegradedRow> rows(tasks.size());
  run_study(
      runs, config.workers,
      [&](std::size_t i) {
        const auto& task = tasks[i];
        const auto& nominal = topologies[task.topology];
        DegradedRow& row = rows[i];
        row.topology = nominal.name;
        if (task.dim < 0) {
          row.healthy_themis_ns = sim::run_collective(nominal, request(config.themis)).result.time_ns;
          return;
        }
        const auto degraded = net::degrade(nominal, {{task.dim, task.fraction}}, "fractions");
        row.dim = task.dim;
        row.fraction = task.fraction;
        const auto base = sim::run_collective(degraded, request("baseline"));
        row.baseline_ns = base.result.time_ns;
        row.ideal_ns = base.result.ideal_time_ns;
        row.stale_ns = sim::run_collective_planned_on(nominal, degraded, request(config.themis)).result.time_ns;
        row.replanned_ns = sim::run_collective(degraded, request(config.themis)).result.time_ns;
      },
      progress);
  for (std::size_t i = topologies.size(); i < tasks.size(); ++i) {
    study.rows.push_back(rows[i]);
    study.rows.back().healthy_themis_ns = rows[tasks[i].topology].healthy_themis_ns;
  }
  return study;
}

std::string format_degraded_table(const DegradedStudy& study) {
  std::string out = fmt::format(
      "All-reduce of {:g} MB in {} chunks; one dimension at a fraction of its bandwidth. Times in us; stale = {} "
      "planned on "
      "the nominal bandwidths, re-planned = on the degraded ones; loss = stale / re-planned - 1\n",
      study.config.size_bytes / 1e6, study.config.chunks, study.config.themis);
  out += fmt::format("{:<20} {:>3} {:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7} {:>8}\n", "topology", "dim", "frac",
                     "healthy", "baseline", "stale", "replanned", "ideal", "loss", "base/rep");
  for (const auto& r : study.rows)
    out += fmt::format("{:<20} {:>3} {:>5.3g} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f} {:>6.1f}% {:>8.3f}\n",
                       r.topology, r.dim, r.fraction, r.healthy_themis_ns / 1e3, r.baseline_ns / 1e3, r.stale_ns / 1e3,
                       r.replanned_ns / 1e3, r.ideal_ns / 1e3, 100 * (r.stale_ns / r.replanned_ns - 1),
                       r.baseline_ns / r.replanned_ns);
  return out;
}

std::vector<std::string> write_degraded_outputs(const DegradedStudy& study, const std::string& out_dir) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : study.rows)
    rows.push_back({{"topology", r.topology},
                    {"dim", r.dim},
                    {"bandwidth_fraction", r.fraction},
                    {"healthy_themis_ns", r.healthy_themis_ns},
                    {"baseline_ns", r.baseline_ns},
                    {"stale_themis_ns", r.stale_ns},
                    {"replanned_themis_ns", r.replanned_ns},
                    {"ideal_ns", r.ideal_ns}});
  const nlohmann::json j{{"size_bytes", study.config.size_bytes},
                         {"chunks", study.config.chunks},
                         {"themis", study.config.themis},
                         {"rows", rows}};
  OutputDir out(out_dir);
  out.write("themis_degraded.json", j.dump(2) + "\n");
  out.write("themis_degraded.csv", json_to_csv(j, "rows"));
  out.write("themis_degraded.txt", format_degraded_table(study));
  return out.written();
}

}  // namespace chorus::eval
