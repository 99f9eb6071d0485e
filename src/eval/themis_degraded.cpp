#include "eval/themis_degraded.h"

#include <fmt/format.h>

#include "core/json_csv.h"
#include "core/text_file.h"
#include "net/degraded.h"
#include "net/presets.h"
#include "sim/run_collective.h"

namespace chorus::eval {

DegradedStudy run_themis_degraded(const DegradedConfig& config, const Progress& progress) {
  DegradedStudy study{config, {}};
  const auto topologies = net::table2_presets();
  int total = 0;
  for (const auto& n : topologies) total += n.num_dims() * static_cast<int>(config.fractions.size());
  int done = 0;
  const auto request = [&](const std::string& scheduler) {
    return sim::make_request(CollectiveKind::kAllReduce, config.size_bytes, config.chunks, scheduler);
  };
  for (const auto& nominal : topologies) {
    const double healthy = sim::run_collective(nominal, request(config.themis)).result.time_ns;
    for (int k = 0; k < nominal.num_dims(); ++k)
      for (double f : config.fractions) {
        const auto degraded = net::degrade(nominal, {{k, f}}, "fractions");
        DegradedRow row;
        row.topology = nominal.name;
        row.dim = k;
        row.fraction = f;
        row.healthy_themis_ns = healthy;
        const auto base = sim::run_collective(degraded, request("baseline"));
        row.baseline_ns = base.result.time_ns;
        row.ideal_ns = base.result.ideal_time_ns;
        row.stale_ns = sim::run_collective_planned_on(nominal, degraded, request(config.themis)).result.time_ns;
        row.replanned_ns = sim::run_collective(degraded, request(config.themis)).result.time_ns;
        study.rows.push_back(row);
        if (progress) progress(++done, total, fmt::format("{} dim {} at {:g}", nominal.name, k, f));
      }
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
