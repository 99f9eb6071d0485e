#pragma once
// `chorus reproduce themis-degraded` (docs/shared-fabric.md): Themis when the
// bandwidth it planned for is not the bandwidth it gets. On every Table 2 topology, each dimension
// in turn at a fraction of its bandwidth; an all-reduce under the baseline, under Themis planned on
// the nominal bandwidths (stale) and under Themis re-planned with the degraded ones. Writes
// themis_degraded.{csv,json,txt}.
#include <string>
#include <vector>

#include "eval/themis_microbench.h"

namespace chorus::eval {

struct DegradedConfig {
  double size_bytes = 1e9;  // all-reduce size (Sec. 2.3 convention)
  int chunks = 64;
  std::vector<double> fractions = {0.5, 0.25};
  std::string themis = "themis-scf";
  int workers = 1;  // simulations at once on a pool of threads (the rows do not depend on it)
};

struct DegradedRow {
  std::string topology;
  int dim = 0;
  double fraction = 1;
  double healthy_themis_ns = 0;  // Themis on the nominal network (no degradation)
  double baseline_ns = 0;        // the baseline on the degraded network (it plans without bandwidths)
  double stale_ns = 0;           // Themis planned on the nominal bandwidths, run on the degraded
  double replanned_ns = 0;       // Themis planned on the degraded bandwidths
  double ideal_ns = 0;           // the ideal bound of the degraded network
};

struct DegradedStudy {
  DegradedConfig config;
  std::vector<DegradedRow> rows;
};

DegradedStudy run_themis_degraded(const DegradedConfig& config, const Progress& progress = {});
std::string format_degraded_table(const DegradedStudy& study);
std::vector<std::string> write_degraded_outputs(const DegradedStudy& study, const std::string& out_dir);

}  // namespace chorus::eval
