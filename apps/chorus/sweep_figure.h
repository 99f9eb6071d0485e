#pragma once
// `chorus sweep --plot DIR --x PARAM --y METRIC [--series PARAM]`: a figure of a metric against a
// parameter, one line per value of the series parameter (the other parameters' points averaged
// per x), drawn by chorus.plot (python/chorus/plot/sweep.py) from DIR/sweep.csv.
#include <string>

#include "sweep/results_table.h"
#include "sweep/spec.h"

namespace chorus::cli {

// Before the run: --x and --series must be parameters of the spec.
void check_sweep_figure(const sweep::Spec& spec, const std::string& x, const std::string& y, const std::string& series);

// After the run: --y must be a column; writes DIR/sweep.csv, DIR/sweep_plot.json and the figure.
void draw_sweep_figure(const std::string& dir, const std::string& csv, const sweep::ResultsTable& table,
                       const std::string& x, const std::string& y, const std::string& series);

}  // namespace chorus::cli
