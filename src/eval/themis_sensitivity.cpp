#include "eval/themis_sensitivity.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>

#include "core/error.h"
#include "core/plot_call.h"
#include "core/text_file.h"
#include "eval/study_runs.h"
#include "eval/themis_workloads.h"
#include "net/presets.h"
#include "workload/astra_text.h"
#include "workload/zoo.h"

namespace chorus::eval {
namespace {

std::vector<double> octaves(double lo, double hi, int steps) {
  std::vector<double> v;
  const int n = static_cast<int>(std::lround(std::log2(hi / lo) * steps));
  for (int i = 0; i <= n; ++i) v.push_back(lo * std::exp2(static_cast<double>(i) / steps));
  return v;
}

// ASTRA-sim 1.0's ResNet-50: relative to the repository root when run from there (as the README
// does), else in the source tree this binary was configured from.
std::string default_astra_file() {
  const std::string name = "Resnet50_DataParallel.txt";
  const std::string relative = "tests/data/workloads/astra-sim-1.0/" + name;
  std::error_code ec;
  if (std::filesystem::exists(relative, ec)) return relative;
#ifdef CHORUS_ASTRA_EXAMPLES_DIR
  return std::string(CHORUS_ASTRA_EXAMPLES_DIR) + "/" + name;
#else
  return relative;
#endif
}

}  // namespace

SensitivityConfig SensitivityConfig::quick() {
  SensitivityConfig c;
  c.workloads = {"resnet152", "gnmt", "dlrm"};
  c.compute_rates = octaves(0.25, 16, 1);
  c.astra_file = default_astra_file();
  c.topologies = net::table2_presets();
  return c;
}

SensitivityConfig SensitivityConfig::full() {
  auto c = quick();
  c.batch_steps_per_octave = 2;
  c.compute_rates = octaves(1.0 / 16, 64, 2);
  return c;
}

std::optional<double> paper_themis_speedup(const std::string& workload) {
  // Themis Sec. 6.2, Themis+SCF mean over the Table 2 topologies.
  if (workload == "resnet152" || workload == kAstraResNet50) return 1.49;
  if (workload == "gnmt" || workload == "dlrm") return 1.30;
  if (workload == "transformer-1t") return 1.25;
  return std::nullopt;
}

std::vector<int> sensitivity_batches(int zoo_batch, int steps_per_octave) {
  if (zoo_batch < 1) throw InputError("batch", fmt::format("the zoo's batch must be >= 1, got {}", zoo_batch));
  if (steps_per_octave != 1 && steps_per_octave != 2)
    throw InputError("batch steps", fmt::format("1 or 2 per octave, got {}", steps_per_octave));
  std::vector<int> v;
  for (int b = 1; b <= 2 * zoo_batch; b *= 2) {
    v.push_back(b);
    // Half octaves: 3 x 2^k sits between 2^(k+1) and 2^(k+2) (integer batches, 1.5x apart).
    if (steps_per_octave == 2 && b >= 2 && 3 * b / 2 <= 2 * zoo_batch) v.push_back(3 * b / 2);
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::optional<SensitivityCrossing> find_crossing(const std::vector<SensitivityPoint>& points, double paper) {
  if (points.empty()) return std::nullopt;
  auto p = points;
  std::sort(p.begin(), p.end(), [](const auto& a, const auto& b) { return a.value < b.value; });
  SensitivityCrossing c{p[0].workload, p[0].axis, paper, p[0].value, p[0].mean_speedup,
                        std::nullopt,  0,         0,     p[0].value, p[0].mean_speedup};
  for (const auto& q : p) {
    if (q.is_default) {
      c.default_value = q.value;
      c.default_speedup = q.mean_speedup;
    }
    if (q.mean_speedup > c.best_speedup) {
      c.best_value = q.value;
      c.best_speedup = q.mean_speedup;
    }
  }
  double best = INFINITY;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double a = p[i].mean_speedup - paper;
    std::optional<double> x;
    std::size_t j = i;
    if (a == 0) {
      x = p[i].value;
    } else if (i + 1 < p.size()) {
      j = i + 1;
      const double b = p[j].mean_speedup - paper;
      if (b != 0 && (a < 0) != (b < 0)) {
        const double la = std::log(p[i].value), lb = std::log(p[j].value);
        x = std::exp(la + (lb - la) * a / (a - b));
      }
    }
    if (!x) continue;
    const double d = std::abs(std::log(*x / c.default_value));
    if (d < best) {
      best = d;
      c.value = x;
      c.lo = p[i].value;
      c.hi = p[j].value;
    }
  }
  return c;
}

SensitivityStudy run_themis_sensitivity(const SensitivityConfig& config, const Progress& progress) {
  const auto start = std::chrono::steady_clock::now();
  if (config.compute_rates.empty()) throw InputError("compute rates", "none given");
  for (double r : config.compute_rates)
    if (!(r > 0) || !std::isfinite(r)) throw InputError("compute rates", fmt::format("must be positive, got {}", r));
  std::string astra_text;
  if (!config.astra_file.empty()) {
    astra_text = read_text_file(config.astra_file, "ASTRA-sim text workload");
    if (!workload::looks_like_astra_text(astra_text))
      throw InputError(config.astra_file, "not an ASTRA-sim text workload (first word DATA, MODEL, MICRO or HYBRID_*)");
  }

  // Every run: one workload at one grid point through the Fig. 12 study's machinery.
  struct Run {
    std::string workload, axis;
    double value;
    bool is_default;
    WorkloadStudyConfig wc;
  };
  std::vector<Run> runs;
  WorkloadStudyConfig base;
  base.topologies = config.topologies;
  base.schedulers = {"baseline", "themis-scf"};
  base.iterations = config.iterations;
  base.chunks = config.chunks;
  for (const auto& w : config.workloads) {
    base.workloads = {w};
    const int zoo_batch = workload::zoo_model(w, "workloads").model.batch_per_npu;
    for (int b : sensitivity_batches(zoo_batch, config.batch_steps_per_octave)) {
      auto wc = base;
      wc.batch = b;
      runs.push_back({w, "batch", static_cast<double>(b), b == zoo_batch, wc});
    }
    for (double r : config.compute_rates) {
      auto wc = base;
      wc.compute = workload::ComputeModel::a100_fp16().scaled(r);
      runs.push_back({w, "compute", r, r == 1, wc});
    }
  }
  if (!config.astra_file.empty()) {
    base.workloads = {kAstraResNet50};
    for (double r : config.compute_rates) {
      auto wc = base;
      wc.make_dag = [&, r](const std::string&, const net::Network& net) {
        workload::AstraTextOptions o;
        o.iterations = config.iterations;
        o.ns_per_cycle = 1.0 / r;
        return workload::parse_astra_text(astra_text, config.astra_file, net, o);
      };
      runs.push_back({kAstraResNet50, "compute", r, r == 1, wc});
    }
  }

  SensitivityStudy study;
  study.config = config;
  // The runs on the pool, each one Fig. 12 study of its own (the time left from the runs' own times).
  std::vector<StudyRun> pool_runs;
  for (const auto& run : runs)
    pool_runs.push_back({{{"workload", run.workload}, {"axis", run.axis}, {"value", fmt::format("{}", run.value)}},
                         fmt::format("{} {}={:g}", run.workload, run.axis, run.value)});
  std::vector<WorkloadStudy> studies(runs.size());
  run_study(
      pool_runs, config.workers, [&](std::size_t i) { studies[i] = run_themis_workloads(runs[i].wc); }, progress);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& run = runs[i];
    const auto& ws = studies[i];
    SensitivityPoint pt{run.workload, run.axis, run.value, run.is_default, 0, INFINITY, 0, 0, 0};
    std::map<std::string, const WorkloadRow*> baseline;
    for (const auto& r : ws.rows)
      if (r.scheduler == "baseline") baseline[r.topology] = &r;
    int n = 0;
    for (const auto& r : ws.rows) {
      if (r.scheduler != "themis-scf") continue;
      const auto* b = baseline.at(r.topology);
      study.rows.push_back({run.workload, run.axis, run.value, r.topology, b->iteration_time_ns, r.iteration_time_ns});
      const double s = b->iteration_time_ns / r.iteration_time_ns;
      pt.mean_speedup += s;
      pt.min_speedup = std::min(pt.min_speedup, s);
      pt.max_speedup = std::max(pt.max_speedup, s);
      pt.baseline_compute_ns += b->compute_ns;
      pt.baseline_exposed_ns += b->exposed_comm_ns;
      ++n;
    }
    if (n) {
      pt.mean_speedup /= n;
      pt.baseline_compute_ns /= n;
      pt.baseline_exposed_ns /= n;
    }
    study.points.push_back(pt);
  }
  // Crossings: per workload and axis, in the order of the points.
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& p : study.points)
    if (std::find(keys.begin(), keys.end(), std::pair{p.workload, p.axis}) == keys.end())
      keys.emplace_back(p.workload, p.axis);
  for (const auto& [w, axis] : keys) {
    const auto paper = paper_themis_speedup(w);
    if (!paper) continue;
    std::vector<SensitivityPoint> mine;
    for (const auto& p : study.points)
      if (p.workload == w && p.axis == axis) mine.push_back(p);
    if (auto c = find_crossing(mine, *paper)) study.crossings.push_back(*c);
  }
  study.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return study;
}

std::vector<std::string> write_sensitivity_outputs(const SensitivityStudy& study, const std::string& dir) {
  OutputDir out(dir);
  std::string csv = "workload,axis,value,topology,baseline_ns,themis_scf_ns,speedup\n";
  for (const auto& r : study.rows)
    csv += fmt::format("{},{},{:g},{},{:.3f},{:.3f},{:.6f}\n", r.workload, r.axis, r.value, r.topology, r.baseline_ns,
                       r.themis_ns, r.baseline_ns / r.themis_ns);
  out.write("sensitivity.csv", csv);
  std::string sum =
      "workload,axis,value,is_default,mean_speedup,min_speedup,max_speedup,baseline_compute_ns,"
      "baseline_exposed_comm_ns,paper_speedup\n";
  for (const auto& p : study.points) {
    const auto paper = paper_themis_speedup(p.workload);
    sum += fmt::format("{},{},{:g},{},{:.6f},{:.6f},{:.6f},{:.3f},{:.3f},{}\n", p.workload, p.axis, p.value,
                       p.is_default ? 1 : 0, p.mean_speedup, p.min_speedup, p.max_speedup, p.baseline_compute_ns,
                       p.baseline_exposed_ns, paper ? fmt::format("{:.2f}", *paper) : "");
  }
  out.write("sensitivity_summary.csv", sum);
  std::string cross = "workload,axis,paper_speedup,default_value,default_speedup,crossing_value,lo,hi\n";
  for (const auto& c : study.crossings)
    cross += fmt::format("{},{},{:.2f},{:g},{:.6f},{},{},{}\n", c.workload, c.axis, c.paper_speedup, c.default_value,
                         c.default_speedup, c.value ? fmt::format("{:.6g}", *c.value) : "",
                         c.value ? fmt::format("{:g}", c.lo) : "", c.value ? fmt::format("{:g}", c.hi) : "");
  out.write("sensitivity_crossings.csv", cross);
  for (auto& f : draw_figures("themis-sensitivity", dir)) out.written().push_back(std::move(f));
  return out.written();
}

namespace {

std::string crossing_text(const SensitivityCrossing& c) {
  const char* what = c.axis == "batch" ? "batch" : "compute rate";
  const std::string unit = c.axis == "batch" ? "" : "x";
  if (!c.value) {
    return fmt::format("{:.2f}x not reached on the {} axis (default {:.3g}{}: {:.3f}x; highest {:.3f}x at {:.3g}{})",
                       c.paper_speedup, what, c.default_value, unit, c.default_speedup, c.best_speedup, c.best_value,
                       unit);
  }
  const std::string where =
      c.lo == c.hi ? fmt::format("{} {:.3g}{}", what, c.lo, unit)
                   : fmt::format("{} ~{:.3g}{} (between {:.3g} and {:.3g})", what, *c.value, unit, c.lo, c.hi);
  return fmt::format("{:.2f}x at {}", c.paper_speedup, where);
}

}  // namespace

std::string format_sensitivity_tables(const SensitivityStudy& study) {
  std::string out = fmt::format(
      "Fig. 12 sensitivity: Themis-SCF speedup over the baseline (iteration time), mean over {} topologies "
      "(Fig. 12's); * = the zoo's default (A100 roofline = compute rate 1)\n",
      study.config.topologies.size());
  std::vector<std::string> workloads;
  for (const auto& p : study.points)
    if (std::find(workloads.begin(), workloads.end(), p.workload) == workloads.end()) workloads.push_back(p.workload);
  for (const auto& w : workloads) {
    const auto paper = paper_themis_speedup(w);
    const bool astra = w == kAstraResNet50 && !study.config.astra_file.empty();
    const std::string paper_text =
        paper ? fmt::format(" (paper: Themis {:.2f}x{})", *paper, astra ? ", ResNet-152's" : "") : "";
    const std::string astra_text =
        astra ? fmt::format("; {}: batch does not apply (fixed in its cycles and sizes)", study.config.astra_file) : "";
    out += fmt::format("\n{}{}{}\n", w, paper_text, astra_text);
    for (const char* axis : {"batch", "compute"}) {
      std::string head, line;
      for (const auto& p : study.points) {
        if (p.workload != w || p.axis != axis) continue;
        head += fmt::format(" {:>7}", fmt::format("{:.3g}{}", p.value, p.is_default ? "*" : ""));
        line += fmt::format(" {:>6.3f}x", p.mean_speedup);
      }
      if (head.empty()) continue;
      out +=
          fmt::format("  {:<9}{}\n  {:<9}{}\n", axis == std::string("batch") ? "batch" : "rate", head, "speedup", line);
    }
    for (const auto& c : study.crossings)
      if (c.workload == w) out += fmt::format("  paper's {}\n", crossing_text(c));
  }
  return out;
}

}  // namespace chorus::eval
