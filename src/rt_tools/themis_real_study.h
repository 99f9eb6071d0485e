#pragma once
// `chorus reproduce themis-real`: Themis's comparison (baseline vs Themis+FIFO vs Themis+SCF)
// executed for real on emulated networks scaled to one host, measured beside the simulator.
// Every row is one `chorus launch -n N -- chorus run collective --emulate --json` job.
#include <string>
#include <vector>

namespace chorus::rt {

struct ThemisRealOptions {
  std::string out = "results/themis-real";  // real_vs_sim.csv, real_vs_sim.svg, speedup.svg, networks/
  std::string size = "8MiB";
  int chunks = 8;
  int iters = 5;
  bool quiet = false;
};

struct ThemisRealRow {
  std::string topology, scheduler;
  int ranks = 0;
  double size_bytes = 0;
  int chunks = 0;
  double measured_ns = 0, predicted_ns = 0;
  std::string check;
};

// Runs the study (spawning this executable), writes real_vs_sim.csv and networks/, returns the
// rows. The figures are drawn separately: draw_figures("themis-real", out) (core/plot_call.h).
std::vector<ThemisRealRow> run_themis_real(const ThemisRealOptions& options);

// The rows as a table, with the Themis+SCF speedup over baseline, measured and predicted.
std::string format_themis_real(const std::vector<ThemisRealRow>& rows);

}  // namespace chorus::rt
