#pragma once
// `chorus reproduce themis-real`: Themis's comparison (baseline vs Themis+FIFO vs Themis+SCF)
// executed for real on emulated networks scaled to one host, measured beside the simulator.
// Every row is one `chorus launch -n N -- chorus run collective --emulate --json` job.
#include <cstdint>
#include <string>
#include <vector>

namespace chorus::eval {

struct ThemisRealOptions {
  std::string out = "results/themis-real";  // real_vs_sim.csv, real_vs_sim.svg, speedup.svg, networks/
  std::string size = "8MiB";
  int chunks = 8;
  int iters = 5;
  int random = 3;          // random heterogeneous networks after the three fixed ones
  std::uint64_t seed = 1;  // they are drawn from
  bool quiet = false;
};

// A network of the study: written to DIR/networks/NAME.yaml, run on `ranks` ranks.
struct ThemisRealNetwork {
  std::string name;
  int ranks = 0;
  std::string yaml;
};

// The ranges random networks are drawn from: 4-8 ranks as 2 or 3 dimensions (2x2, 2x3, 3x2,
// 2x4, 4x2, 2x2x2) of at least two kinds (ring: 2 links per rank, fully connected: P-1, switch:
// 1, sizes 2 and 4 only); per dimension an aggregate bandwidth and a step latency, each
// log-uniform in its range. Bandwidths low enough that pacing, not the host, sets the stages.
inline constexpr double kRandomMinBandwidthGbps = 0.1, kRandomMaxBandwidthGbps = 0.4;  // per rank and dimension
inline constexpr double kRandomMinLatencyNs = 10'000, kRandomMaxLatencyNs = 500'000;

// `count` networks drawn from `seed` (std::mt19937_64 and a fixed mapping to ranges, so the same
// networks on every platform), named rnd<seed>-<i>_<kinds>-<shape>.
std::vector<ThemisRealNetwork> random_themis_networks(int count, std::uint64_t seed);

// The goal of the study: every row within 5 % of the prediction, every measured
// speedup over baseline within 0.05x of the predicted one. The table marks rows that miss it.
inline constexpr double kRatioGoal = 0.05, kSpeedupGoal = 0.05;

struct ThemisRealRow {
  std::string topology, scheduler;
  int ranks = 0;
  double size_bytes = 0;
  int chunks = 0;
  double measured_ns = 0, predicted_ns = 0;
  std::string check;
};

// Runs the study (spawning this executable; the jobs read their networks from DIR/networks/,
// written here), returns the rows. The figures are drawn separately: draw_figures("themis-real",
// out) (core/plot_call.h), after write_themis_real_outputs.
std::vector<ThemisRealRow> run_themis_real(const ThemisRealOptions& options);

// DIR/real_vs_sim.csv: the rows with their measured/predicted ratio. Returns the path.
std::string write_themis_real_outputs(const std::vector<ThemisRealRow>& rows, const std::string& dir);

// The rows as a table, with each scheduler's speedup over baseline, measured and predicted, the
// rows outside the goal marked, and a summary line.
std::string format_themis_real(const std::vector<ThemisRealRow>& rows);

}  // namespace chorus::eval
