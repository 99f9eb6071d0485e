#pragma once
// The figures of `chorus reproduce` are drawn by the Python package chorus.plot (python/chorus/plot,
// matplotlib): a study writes its CSV/JSON into a directory, then calls draw_figures(), which runs
//   <python> -m chorus.plot <study> <dir>
// with PYTHONPATH pointing at the package. The interpreter (one that can import matplotlib) and the
// package directory are chosen at configure time (CMake); the environment variable
// CHORUS_PLOT_PYTHON overrides the interpreter (a name without a slash is looked up in PATH).
#include <string>
#include <vector>

namespace chorus {

// Runs chorus.plot for `study` ("themis", "themis-workloads", "themis-real", "topoopt", "profile") on `dir` and returns
// the paths of the figures it wrote. Throws InputError("plot", ...) naming the command and what to
// install if the interpreter cannot be started or exits with a non-zero status (its own message,
// naming the file and column, is on stderr); the study's data files are written by then.
std::vector<std::string> draw_figures(const std::string& study, const std::string& dir);

// The interpreter draw_figures() runs (CHORUS_PLOT_PYTHON, else the configured one).
std::string plot_python();

}  // namespace chorus
