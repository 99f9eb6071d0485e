#include "eval/themis_microbench.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/plot_call.h"
#include "core/text_file.h"
#include "eval/study_runs.h"
#include "net/presets.h"
#include "sim/run_collective.h"

namespace chorus::eval {
namespace {

std::string size_label(double bytes) {
  if (bytes >= 1e9 && static_cast<long long>(bytes) % 1000000000LL == 0) return fmt::format("{:.0f} GB", bytes / 1e9);
  if (bytes >= 1e6) return fmt::format("{:g} MB", bytes / 1e6);
  return fmt::format("{:.0f} B", bytes);
}

const net::Network& find_topology(const MicrobenchConfig& cfg, const std::string& name,
                                  std::vector<net::Network>& extra) {
  for (const auto& n : cfg.topologies)
    if (n.name == name) return n;
  auto preset = net::find_preset(name);
  if (!preset) throw InputError("reproduce themis", fmt::format("unknown topology '{}'", name));
  extra.push_back(*preset);
  return extra.back();
}

sim::CollectiveRun simulate(const MicrobenchConfig& cfg, const net::Network& network, double size, int chunks,
                            const std::string& scheduler) {
  const auto req = sim::make_request(CollectiveKind::kAllReduce, size, chunks, scheduler);
  sim::SimOptions options;
  options.max_chunks_per_dim = cfg.max_chunks_per_dim;
  return sim::run_collective(network, req, options);
}

const MicrobenchRow* find_row(const MicrobenchReport& report, const std::string& study, const std::string& topology,
                              double size, const std::string& scheduler, int chunks) {
  for (const auto& r : report.rows)
    if (r.study == study && r.topology == topology && r.size_bytes == size && r.scheduler == scheduler &&
        r.chunks == chunks)
      return &r;
  return nullptr;
}

// Fig. 11: mean avg. BW utilization over the size study's topologies; nullopt if none ran.
std::optional<double> mean_utilization(const MicrobenchReport& report, double size, const std::string& scheduler) {
  double sum = 0;
  int count = 0;
  for (const auto& n : report.config.topologies)
    if (const auto* r = find_row(report, "sizes", n.name, size, scheduler, report.config.chunks)) {
      sum += r->avg_bw_utilization;
      ++count;
    }
  if (count == 0) return std::nullopt;
  return sum / count;
}

}  // namespace

MicrobenchConfig MicrobenchConfig::paper_defaults() {
  MicrobenchConfig c;
  c.topologies = net::table2_presets();
  c.sizes_bytes = {100e6, 250e6, 500e6, 1e9};
  c.schedulers = {"baseline", "themis-fifo", "themis-scf", "ideal"};
  c.sweep_chunks = {4, 8, 16, 32, 64, 128, 256, 512};
  c.sweep_topologies = {"3D-SW_SW_SW_hetero", "4D-Ring_FC_Ring_SW"};
  return c;
}

MicrobenchReport run_themis_microbench(const MicrobenchConfig& config, const Progress& progress) {
  MicrobenchReport report;
  report.config = config;
  std::vector<net::Network> extra;
  extra.reserve(config.sweep_topologies.size() + 1);
  // Every simulation as a run of its own: the sizes study, the chunk sweep, then Fig. 9's activity.
  struct Task {
    const char* study;  // nullptr: an activity trace
    const net::Network* network;
    double size;
    int chunks;
    std::string scheduler;
  };
  std::vector<Task> tasks;
  for (const auto& n : config.topologies)
    for (double size : config.sizes_bytes)
      for (const auto& s : config.schedulers) tasks.push_back({"sizes", &n, size, config.chunks, s});
  for (const auto& name : config.sweep_topologies) {
    const auto& n = find_topology(config, name, extra);
    for (int chunks : config.sweep_chunks)
      for (const auto& s : config.schedulers) tasks.push_back({"chunk_sweep", &n, config.sweep_size_bytes, chunks, s});
  }
  const auto& act_net = find_topology(config, config.activity_topology, extra);
  for (const auto& s : config.schedulers)
    tasks.push_back({nullptr, &act_net, config.activity_size_bytes, config.chunks, s});
  std::vector<StudyRun> runs;
  for (const auto& t : tasks)
    runs.push_back({{{"topology", t.network->name},
                     {"size", fmt::format("{}", t.size)},
                     {"chunks", std::to_string(t.chunks)},
                     {"scheduler", t.scheduler},
                     {"activity", t.study ? "no" : "yes"}},
                    t.study ? fmt::format("{} {} {} x{}", t.network->name, size_label(t.size), t.scheduler, t.chunks)
                            : fmt::format("{} activity {}", t.network->name, t.scheduler)});
  std::vector<MicrobenchRow> rows(tasks.size());
  std::vector<ActivityTrace> traces(tasks.size());
  run_study(
      runs, config.workers,
      [&](std::size_t i) {
        const auto& t = tasks[i];
        const auto run = simulate(config, *t.network, t.size, t.chunks, t.scheduler);
        if (t.study) {
          rows[i] = MicrobenchRow{t.study,
                                  t.network->name,
                                  t.size,
                                  t.scheduler,
                                  t.chunks,
                                  run.result.time_ns,
                                  run.result.ideal_time_ns,
                                  run.result.avg_bw_utilization};
          return;
        }
        ActivityTrace trace{t.scheduler, config.activity_window_ns, {}};
        for (const auto& intervals : run.result.active_intervals)
          trace.rate_per_dim.push_back(sim::activity_rate(intervals, config.activity_window_ns, run.result.time_ns));
        traces[i] = std::move(trace);
      },
      progress);
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (tasks[i].study)
      report.rows.push_back(std::move(rows[i]));
    else
      report.activity.push_back(std::move(traces[i]));

  // Headline: mean utilization and speedup over baseline on the "sizes" study.
  std::map<std::pair<std::string, double>, double> baseline_time;
  for (const auto& r : report.rows)
    if (r.study == "sizes" && r.scheduler == "baseline") baseline_time[{r.topology, r.size_bytes}] = r.time_ns;
  for (const auto& s : config.schedulers) {
    SchedulerSummary sum{s, 0, 0, 0, ""};
    int count = 0;
    for (const auto& r : report.rows) {
      if (r.study != "sizes" || r.scheduler != s) continue;
      ++count;
      sum.mean_utilization += r.avg_bw_utilization;
      const auto it = baseline_time.find({r.topology, r.size_bytes});
      if (it != baseline_time.end()) {
        const double speedup = it->second / r.time_ns;
        sum.mean_speedup_over_baseline += speedup;
        if (speedup > sum.max_speedup_over_baseline) {
          sum.max_speedup_over_baseline = speedup;
          sum.max_speedup_at = fmt::format("{} {}", r.topology, size_label(r.size_bytes));
        }
      }
    }
    if (count > 0) {
      sum.mean_utilization /= count;
      sum.mean_speedup_over_baseline /= count;
    }
    report.summary.push_back(sum);
  }
  return report;
}

std::string format_microbench_tables(const MicrobenchReport& report) {
  const auto& cfg = report.config;
  std::string out;
  out += fmt::format("All-reduce time in ms and avg. BW utilization, {} chunks (Themis Figs. 8 and 11)\n", cfg.chunks);
  std::string header = fmt::format("{:<20} {:>8}", "topology", "size");
  for (const auto& s : cfg.schedulers) header += fmt::format(" {:>18}", s);
  out += header + "\n";
  for (const auto& n : cfg.topologies) {
    for (double size : cfg.sizes_bytes) {
      std::string line = fmt::format("{:<20} {:>8}", n.name, size_label(size));
      for (const auto& s : cfg.schedulers) {
        const auto* r = find_row(report, "sizes", n.name, size, s, cfg.chunks);
        line += r ? fmt::format(" {:>9.3f} ({:>5.1f}%)", r->time_ns / 1e6, 100 * r->avg_bw_utilization)
                  : fmt::format(" {:>18}", "-");
      }
      out += line + "\n";
    }
  }
  out += "\nAvg. BW utilization by size, mean over topologies (Fig. 11)\n";
  header = fmt::format("{:<10}", "size");
  for (const auto& s : cfg.schedulers) header += fmt::format(" {:>12}", s);
  out += header + "\n";
  for (double size : cfg.sizes_bytes) {
    std::string line = fmt::format("{:<10}", size_label(size));
    for (const auto& s : cfg.schedulers)
      line += fmt::format(" {:>11.1f}%", 100 * mean_utilization(report, size, s).value_or(0.0));
    out += line + "\n";
  }
  out += fmt::format("\nAvg. BW utilization vs chunks, {} all-reduce (Fig. 10)\n", size_label(cfg.sweep_size_bytes));
  header = fmt::format("{:<20} {:>7}", "topology", "chunks");
  for (const auto& s : cfg.schedulers) header += fmt::format(" {:>12}", s);
  out += header + "\n";
  for (const auto& t : cfg.sweep_topologies) {
    for (int c : cfg.sweep_chunks) {
      std::string line = fmt::format("{:<20} {:>7}", t, c);
      for (const auto& s : cfg.schedulers) {
        const auto* r = find_row(report, "chunk_sweep", t, cfg.sweep_size_bytes, s, c);
        line += r ? fmt::format(" {:>11.1f}%", 100 * r->avg_bw_utilization) : fmt::format(" {:>12}", "-");
      }
      out += line + "\n";
    }
  }
  out +=
      "\nHeadline (mean over topologies x sizes; paper: baseline 56.31 %, Themis+FIFO 87.67 %, "
      "Themis+SCF 95.14 %, SCF speedup 1.72x mean, 2.70x max)\n";
  for (const auto& s : report.summary) {
    out += fmt::format("  {:<12} utilization {:>5.1f} %   speedup over baseline {:.2f}x mean, {:.2f}x max ({})\n",
                       s.scheduler, 100 * s.mean_utilization, s.mean_speedup_over_baseline, s.max_speedup_over_baseline,
                       s.max_speedup_at);
  }
  out += "Where and why the model differs from the paper: docs/themis-model.md, \"Results against the paper\"\n";
  return out;
}

std::vector<std::string> write_microbench_outputs(const MicrobenchReport& report, const std::string& dir) {
  const auto& cfg = report.config;
  OutputDir out(dir);

  std::string csv = "study,topology,size_bytes,scheduler,chunks,time_ns,ideal_time_ns,avg_bw_utilization\n";
  for (const auto& r : report.rows)
    csv += fmt::format("{},{},{:.0f},{},{},{:.3f},{:.3f},{:.6f}\n", r.study, r.topology, r.size_bytes, r.scheduler,
                       r.chunks, r.time_ns, r.ideal_time_ns, r.avg_bw_utilization);
  out.write("microbench.csv", csv);

  nlohmann::json summary = nlohmann::json::array();
  for (const auto& s : report.summary)
    summary.push_back({{"scheduler", s.scheduler},
                       {"mean_avg_bw_utilization", s.mean_utilization},
                       {"mean_speedup_over_baseline", s.mean_speedup_over_baseline},
                       {"max_speedup_over_baseline", s.max_speedup_over_baseline},
                       {"max_speedup_at", s.max_speedup_at}});
  out.write("summary.json", summary.dump(2) + "\n");

  std::string act = "scheduler,dim,window_start_ns,activity_rate\n";
  for (const auto& a : report.activity)
    for (size_t d = 0; d < a.rate_per_dim.size(); ++d)
      for (size_t w = 0; w < a.rate_per_dim[d].size(); ++w)
        act += fmt::format("{},{},{:.0f},{:.4f}\n", a.scheduler, d, static_cast<double>(w) * a.window_ns,
                           a.rate_per_dim[d][w]);
  out.write("activity.csv", act);

  // What the figures need beyond the CSV: the Fig. 9 run and the study's parameters.
  const nlohmann::json study = {{"chunks", cfg.chunks},
                                {"sizes_bytes", cfg.sizes_bytes},
                                {"schedulers", cfg.schedulers},
                                {"sweep_topologies", cfg.sweep_topologies},
                                {"sweep_chunks", cfg.sweep_chunks},
                                {"sweep_size_bytes", cfg.sweep_size_bytes},
                                {"activity_topology", cfg.activity_topology},
                                {"activity_size_bytes", cfg.activity_size_bytes},
                                {"activity_window_ns", cfg.activity_window_ns}};
  out.write("study.json", study.dump(2) + "\n");

  // Figs. 8-11 (python/chorus/plot/themis.py).
  for (auto& f : draw_figures("themis", dir)) out.written().push_back(std::move(f));
  return out.written();
}

}  // namespace chorus::eval
