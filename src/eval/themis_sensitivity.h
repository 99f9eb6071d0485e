#pragma once
// Fig. 12 explained by a sensitivity study: Themis-SCF's speedup over the
// baseline scheduler for ResNet-152, GNMT and DLRM against (a) the per-NPU mini-batch and (b)
// the compute rate (the A100 roofline's peak FLOP/s and memory bandwidth, both times a
// multiplier, so every compute time is divided by it), on Fig. 12's topologies (the six of
// Table 2), with the runs of the Fig. 12 study (eval/themis_workloads.h). The same against
// the compute rate for ASTRA-sim 1.0's ResNet-50 text input (its compute cycles divided by
// the multiplier; its batch is baked into those cycles and its gradient sizes, so the batch
// axis does not apply). Where the mean speedup crosses the paper's (Themis Sec. 6.2: 1.49x,
// 1.30x, 1.30x) is interpolated on each axis.
#include <optional>
#include <string>
#include <vector>

#include "eval/themis_microbench.h"
#include "net/network.h"

namespace chorus::eval {

inline constexpr const char* kAstraResNet50 = "astra-resnet50";

struct SensitivityConfig {
  // quick() and full() fill workloads (resnet152, gnmt, dlrm), compute_rates, astra_file
  // (tests/data/workloads/astra-sim-1.0/Resnet50_DataParallel.txt: relative to the working
  // directory if it is there, else in the configured source tree) and topologies (Fig. 12's: the six of Table 2); a default-constructed config has none.
  std::vector<std::string> workloads;  // zoo models
  // Per-NPU mini-batches for each zoo model: the powers of two from 1 up to twice the zoo's
  // batch, with 2: also 3 x 2^k in between (half octaves).
  int batch_steps_per_octave = 1;
  std::vector<double> compute_rates;  // multipliers on the A100 roofline
  // ASTRA-sim 1.0 text workload (Resnet50_DataParallel.txt) swept over compute_rates at 1 ns
  // per cycle x 1 / rate; empty: none.
  std::string astra_file;  // its rows are named kAstraResNet50
  std::vector<net::Network> topologies;
  int iterations = 3;
  int chunks = 64;
  int workers = 1;  // runs (a workload at a grid point) at once on a pool of threads; the study does not depend on it

  // The quick grid (batch 1..2x zoo's in octaves; rates 1/4..16 in octaves).
  static SensitivityConfig quick();
  // The finer, larger grid: half octaves, rates 1/16..64.
  static SensitivityConfig full();
};

// The paper's Themis-SCF mean speedup (Fig. 12 / Sec. 6.2) for a workload; ResNet-152's for
// the ASTRA-sim ResNet-50 input (the paper has no ResNet-50); nullopt for others.
std::optional<double> paper_themis_speedup(const std::string& workload);

struct SensitivityRow {        // one workload x axis value x topology
  std::string workload, axis;  // axis "batch" or "compute"
  double value;                // batch per NPU, or compute rate
  std::string topology;
  double baseline_ns, themis_ns;  // iteration time
};

struct SensitivityPoint {  // one workload x axis value, over the topologies
  std::string workload, axis;
  double value;
  bool is_default;  // the zoo's batch, or rate 1
  double mean_speedup, min_speedup, max_speedup;
  double baseline_compute_ns, baseline_exposed_ns;  // per iteration, mean over topologies
};

struct SensitivityCrossing {  // where the mean speedup equals the paper's, on one axis
  std::string workload, axis;
  double paper_speedup;
  double default_value, default_speedup;
  std::optional<double> value;      // interpolated (log axis); nullopt: not within the grid
  double lo, hi;                    // the grid points around it (value set)
  double best_value, best_speedup;  // the highest mean speedup on the axis, and where
};

struct SensitivityStudy {
  SensitivityConfig config;
  std::vector<SensitivityRow> rows;
  std::vector<SensitivityPoint> points;
  std::vector<SensitivityCrossing> crossings;
  double wall_s = 0;
};

// The per-NPU batches swept for a zoo model whose own batch is `zoo_batch`.
std::vector<int> sensitivity_batches(int zoo_batch, int steps_per_octave);

// The crossing of `points` (one workload and axis, any order) with `paper`: the value where the
// mean speedup, linear between neighbouring grid points in log(value), equals `paper`; of
// several, the one nearest the default point (in log value). nullopt when none.
std::optional<SensitivityCrossing> find_crossing(const std::vector<SensitivityPoint>& points, double paper);

// Throws InputError for a missing or unreadable astra_file, a bad grid.
SensitivityStudy run_themis_sensitivity(const SensitivityConfig& config, const Progress& progress = {});
// DIR/sensitivity.csv (per topology), DIR/sensitivity_summary.csv (means per point),
// DIR/sensitivity_crossings.csv, then (chorus.plot themis-sensitivity) DIR/fig12_sensitivity.svg.
std::vector<std::string> write_sensitivity_outputs(const SensitivityStudy& study, const std::string& dir);
std::string format_sensitivity_tables(const SensitivityStudy& study);

}  // namespace chorus::eval
