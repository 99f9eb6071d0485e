#pragma once
// The microbenchmark study of Themis Sec. 6.1: all-reduce of 100 MB .. 1 GB on the six
// Table 2 topologies under every scheduler (Figs. 8, 11), the chunk-count sweep on the
// two Fig. 10 topologies, and per-dimension activity over time (Fig. 9).
#include <functional>
#include <string>
#include <vector>

#include "net/network.h"

namespace chorus::eval {

struct MicrobenchConfig {
  std::vector<net::Network> topologies;                // default: the six of Table 2
  std::vector<double> sizes_bytes;                     // default: 100 MB, 250 MB, 500 MB, 1 GB (decimal)
  std::vector<std::string> schedulers;                 // default: baseline, themis-fifo, themis-scf, ideal
  int chunks = 64;                                     // Sec. 5.3 default
  std::vector<int> sweep_chunks;                       // default: 4, 8, ..., 512 (Fig. 10)
  std::vector<std::string> sweep_topologies;           // default: 3D-SW_SW_SW_hetero, 4D-Ring_FC_Ring_SW
  double sweep_size_bytes = 100e6;                     // Fig. 10: 100 MB
  std::string activity_topology = "3D-SW_SW_SW_homo";  // Fig. 9
  double activity_size_bytes = 1e9;                    // Fig. 9: 1 GB
  double activity_window_ns = 100e3;                   // Fig. 9: 100 us windows
  int max_chunks_per_dim = 0;                          // sim::SimOptions: 0 = no limit
  int workers = 1;  // simulations at once on a pool of threads (the report does not depend on it)

  static MicrobenchConfig paper_defaults();
};

struct MicrobenchRow {
  std::string study;  // "sizes" (Figs. 8, 11) or "chunk_sweep" (Fig. 10)
  std::string topology;
  double size_bytes;
  std::string scheduler;
  int chunks;
  double time_ns;
  double ideal_time_ns;
  double avg_bw_utilization;
};

struct ActivityTrace {
  std::string scheduler;
  double window_ns;
  std::vector<std::vector<double>> rate_per_dim;  // [dim][window] in 0..1
};

struct SchedulerSummary {
  std::string scheduler;
  double mean_utilization;  // over topologies x sizes at `chunks` chunks
  double mean_speedup_over_baseline;
  double max_speedup_over_baseline;
  std::string max_speedup_at;  // "topology size"
};

struct MicrobenchReport {
  MicrobenchConfig config;
  std::vector<MicrobenchRow> rows;
  std::vector<ActivityTrace> activity;
  std::vector<SchedulerSummary> summary;
};

// progress(done, total, label): after each simulation, one at a time (eval/study_runs.h: the label
// ends with the time left).
using Progress = std::function<void(int, int, const std::string&)>;
MicrobenchReport run_themis_microbench(const MicrobenchConfig& config, const Progress& progress = {});

// Writes DIR/microbench.csv, DIR/summary.json, DIR/activity.csv, DIR/study.json (the config),
// then has chorus.plot (core/plot_call.h, matplotlib) draw DIR/fig8_time_<size>MB.svg,
// DIR/fig9_activity.svg, DIR/fig10_chunks.svg, DIR/fig11_utilization.svg. Returns the paths
// written. Throws InputError if plotting fails (the data files are written by then).
std::vector<std::string> write_microbench_outputs(const MicrobenchReport& report, const std::string& dir);

// Human-readable tables (Fig. 8 times, Fig. 11 utilization, Fig. 10 sweep, headline).
std::string format_microbench_tables(const MicrobenchReport& report);

}  // namespace chorus::eval
