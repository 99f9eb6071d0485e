#include "apps/chorus/sweep_figure.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/plot_call.h"
#include "core/suggest.h"
#include "core/text_file.h"

namespace chorus::cli {
namespace {

std::vector<std::string> spec_params(const sweep::Spec& spec) {
  std::set<std::string> names;
  for (const auto& p : spec.points)
    for (const auto& kv : p) names.insert(kv.first);
  return {names.begin(), names.end()};
}

void require_one_of(const std::string& flag, const std::string& name, const std::vector<std::string>& names,
                    const std::string& what) {
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw InputError(flag, fmt::format("'{}' is not {}{}; choose from: {}", name, what, did_you_mean(name, names),
                                       fmt::join(names, ", ")));
}

}  // namespace

void check_sweep_figure(const sweep::Spec& spec, const std::string& x, const std::string& y,
                        const std::string& series) {
  if (x.empty() || y.empty()) throw InputError("--plot", "needs --x PARAM and --y METRIC");
  const auto names = spec_params(spec);
  require_one_of("--x", x, names, "a parameter of the spec");
  if (!series.empty()) require_one_of("--series", series, names, "a parameter of the spec");
}

void draw_sweep_figure(const std::string& dir, const std::string& csv, const sweep::ResultsTable& table,
                       const std::string& x, const std::string& y, const std::string& series) {
  std::vector<std::string> metrics;
  for (const auto& m : table.metrics) metrics.push_back(m.first);
  if (!table.rows.empty()) require_one_of("--y", y, metrics, "a metric of the points' rows");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError("--plot", fmt::format("{}: cannot create the directory: {}", dir, ec.message()));
  write_text_file((std::filesystem::path(dir) / "sweep.csv").string(), csv);
  const nlohmann::json plot{{"x", x}, {"y", y}, {"series", series}};
  write_text_file((std::filesystem::path(dir) / "sweep_plot.json").string(), plot.dump(2) + "\n");
  for (const auto& f : draw_figures("sweep", dir)) fmt::print("figure: {}\n", f);
}

}  // namespace chorus::cli
