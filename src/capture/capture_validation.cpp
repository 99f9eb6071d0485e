// `chorus reproduce capture-validation`: programs captured, their windows simulated on this host's
// model, against their unrecorded step times (capture_validation.h).
#include "capture/capture_validation.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/capture_run.h"
#include "capture/measured_channel.h"
#include "capture/step_times.h"
#include "core/error.h"
#include "core/text_file.h"
#include "sim/dag_executor.h"
#include "workload/capture/capture_import.h"
#include "workload/capture/capture_manifest.h"
#include "workload/torch_profiler_trace.h"

#ifndef CHORUS_CAPTURE_SOURCE_DIR
#error "CHORUS_CAPTURE_SOURCE_DIR (the source directory) is set by src/capture/CMakeLists.txt"
#endif

namespace chorus::capture {

namespace fs = std::filesystem;

std::vector<ValidationProgram> validation_programs() {
  // The programs' own command lines (python scripts' arguments, not chorus's flags).
  using Args = std::vector<std::string>;
  const Args mlp = {"--batch", "128", "--width", "256", "--layers", "3"};                       // cli-command-line
  const Args mlp_small = {"--batch", "16", "--width", "32", "--layers", "1"};                   // cli-command-line
  const Args moe_small = {"--tokens", "64", "--dim", "32", "--hidden", "64", "--layers", "1"};  // cli-command-line
  const Args dlrm = {"--tables", "4"};                                                          // cli-command-line
  const Args dlrm_small = {"--batch", "16", "--tables", "4", "--rows", "100", "--dim", "16"};   // cli-command-line
  const Args own_small = {"--batch", "8", "--length", "16", "--dim", "32", "--vocab", "100"};   // cli-command-line
  return {
      {"ddp-mlp", "examples/torch/ddp_mlp.py", mlp, mlp_small},
      {"moe", "examples/torch/moe.py", {}, moe_small},
      {"dlrm", "examples/torch/dlrm.py", dlrm, dlrm_small},
      {"validation", "tests/data/capture/validation_program.py", {}, own_small},
  };
}

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The reference: per step from `from` on (after the window, the host window and the steps that
// write their files or wait for the other ranks' writing), the ranks' mean step time; the median
// over those steps. The recorded steps' mean beside it.
void step_reference(const std::vector<workload::capture::RankRecord>& records, int first, int last, int from,
                    ValidationRun& r) {
  std::vector<double> reference;
  double inside = 0;
  int inside_n = 0;
  std::size_t steps = records.front().step_end_ns.size();
  for (const auto& rec : records) steps = std::min(steps, rec.step_end_ns.size());
  for (std::size_t k = 1; k < steps; ++k) {
    double sum = 0;
    for (const auto& rec : records) sum += static_cast<double>(rec.step_end_ns[k] - rec.step_end_ns[k - 1]) / 1e6;
    const double ms = sum / static_cast<double>(records.size());
    const int step = static_cast<int>(k);
    if (step >= first && step < last) {
      inside += ms;
      ++inside_n;
    } else if (step >= from) {
      reference.push_back(ms);
    }
  }
  r.measured_ms = median(reference);
  r.recorded_ms = inside_n ? inside / inside_n : 0;
}

ValidationRun measure(const std::string& dir, int reference_from) {
  namespace wc = workload::capture;
  ValidationRun run;
  run.capture_dir = dir;
  const auto m = wc::read_manifest(dir);
  const int steps = m.last_step - m.first_step;
  std::vector<wc::RankRecord> records;
  double waits_us = 0;
  for (const auto& f : m.ranks) {
    records.push_back(wc::read_rank_record(f));
    const auto& path = f.host_trace.empty() ? f.trace : f.host_trace;  // the least recorded
    const auto trace = workload::read_profiler_trace(read_text_file(path, "the profiler trace"), path);
    for (const auto& e : trace.top_level) waits_us += e.wait_after_us + e.wait_inside_us;
  }
  step_reference(records, m.first_step, m.last_step, reference_from, run);
  if (run.measured_ms <= 0)
    throw InputError(dir, fmt::format("no step from {} on to measure the program by", reference_from));
  // The host window's trace has its own number of steps (python/chorus/capture).
  const auto& rec0 = records.front();
  const bool host = !m.ranks.front().host_trace.empty() && rec0.host_last_step > rec0.host_first_step;
  const int traced = host ? rec0.host_last_step - rec0.host_first_step : steps;
  run.measured_exposed_ms = waits_us / 1e3 / traced / m.world;
  const auto network = capture_host_network(m, m.world, "backend");  // the backend's channel as the window measured it
  sim::WorkloadSimOptions options;
  const auto dag = wc::import_capture(m, network, {});  // rank 0, each stretch the slowest rank's
  const auto res = sim::simulate_workload(dag, network, options).result;
  run.predicted_ms = res.total_ns / 1e6 / steps;
  run.predicted_compute_ms = res.compute_ns / 1e6 / steps;
  run.predicted_exposed_ms = res.exposed_comm_ns / 1e6 / steps;
  return run;
}

void summarize(ValidationRow& row) {
  auto col = [&](double ValidationRun::*field) {
    std::vector<double> v;
    for (const auto& r : row.runs) v.push_back(r.*field);
    return median(v);
  };
  row.measured_ms = col(&ValidationRun::measured_ms);
  row.predicted_ms = col(&ValidationRun::predicted_ms);
  row.recorded_ms = col(&ValidationRun::recorded_ms);
  row.measured_exposed_ms = col(&ValidationRun::measured_exposed_ms);
  row.measured_compute_ms = row.measured_ms - row.measured_exposed_ms;
  row.predicted_compute_ms = col(&ValidationRun::predicted_compute_ms);
  row.predicted_exposed_ms = col(&ValidationRun::predicted_exposed_ms);
  row.error_pct = 100.0 * (row.predicted_ms - row.measured_ms) / row.measured_ms;
}

}  // namespace

ValidationStudy run_capture_validation(const ValidationOptions& o) {
  const auto all = validation_programs();
  std::vector<ValidationProgram> programs;
  for (const auto& name : o.programs) {
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& p) { return p.name == name; });
    if (it == all.end())
      throw InputError("programs",
                       fmt::format("'{}' is not a program of the study (ddp-mlp, moe, dlrm, validation)", name));
    programs.push_back(*it);
  }
  if (o.programs.empty()) programs = all;
  if (o.ranks.empty()) throw InputError("ranks", "give at least one rank count");
  for (int n : o.ranks)
    if (n < 2 || n > 8) throw InputError("ranks", fmt::format("{}: the study runs 2..8 ranks", n));
  if (o.backends.empty()) throw InputError("backends", "give at least one backend");
  for (const auto& b : o.backends)
    if (b != "shm" && b != "gloo") throw InputError("backends", fmt::format("'{}': shm or gloo", b));
  if (o.runs < 1 || o.runs > 50) throw InputError("runs", fmt::format("must be in 1..50, got {}", o.runs));
  const int written = host_window_write_step(o.first_step, o.last_step);
  if (o.reference_from < written + 2 || o.steps <= o.reference_from)
    throw InputError("steps", fmt::format("the reference steps {}..{} must follow the host window's trace ({})",
                                          o.reference_from, o.steps - 1, written));
  const std::string source = o.source_dir.empty() ? std::string(CHORUS_CAPTURE_SOURCE_DIR) : o.source_dir;
  ValidationStudy study;
  for (const auto& p : programs)
    for (int n : o.ranks)
      for (const auto& backend : o.backends) {
        ValidationRow row{p.name, backend, n, {}};
        for (int k = 0; k < o.runs; ++k) {
          CaptureOptions c;
          c.ranks = n;
          c.backend = backend;
          c.first_step = o.first_step;
          c.last_step = o.last_step;
          c.quiet = true;
          c.chorus_version = o.chorus_version;
          c.out = (fs::path(o.out) / "captures" / fmt::format("{}-{}r-{}", p.name, n, backend) /
                   fmt::format("run{}", k + 1))
                      .string();
          const auto script = (fs::path(source) / p.script).string();
          c.command = {o.python, script, "--steps", std::to_string(o.steps)};  // cli-command-line
          for (const auto& a : o.small ? p.small : p.args) c.command.push_back(a);
          const auto r = run_capture(c);
          if (!r.complete)
            throw InputError(r.manifest, fmt::format("a partial capture (complete: false): {}", r.error));
          auto run = measure(fs::path(r.manifest).parent_path().string(), o.reference_from);
          if (o.progress)
            o.progress(
                fmt::format("{} on {} ranks, {}, run {}/{}: measured {:.2f} ms a step (recorded {:.2f}), "
                            "predicted {:.2f} ms",
                            p.name, n, backend, k + 1, o.runs, run.measured_ms, run.recorded_ms, run.predicted_ms));
          row.runs.push_back(std::move(run));
        }
        summarize(row);
        study.rows.push_back(std::move(row));
      }
  std::vector<double> errors;
  for (const auto& r : study.rows) errors.push_back(std::abs(r.error_pct));
  study.median_abs_error_pct = median(errors);
  study.worst_abs_error_pct = errors.empty() ? 0 : *std::max_element(errors.begin(), errors.end());
  return study;
}

std::vector<std::string> write_capture_validation(const ValidationStudy& study, const std::string& out) {
  fs::create_directories(out);
  const auto csv_path = (fs::path(out) / "capture_validation.csv").string();
  const auto json_path = (fs::path(out) / "capture_validation.json").string();
  std::string csv =
      "program,ranks,backend,runs,measured_ms,predicted_ms,error_pct,measured_compute_ms,predicted_compute_ms,"
      "measured_exposed_comm_ms,predicted_exposed_comm_ms,recorded_ms\n";
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : study.rows) {
    csv += fmt::format("{},{},{},{},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f}\n", r.program, r.ranks,
                       r.backend, r.runs.size(), r.measured_ms, r.predicted_ms, r.error_pct, r.measured_compute_ms,
                       r.predicted_compute_ms, r.measured_exposed_ms, r.predicted_exposed_ms, r.recorded_ms);
    nlohmann::json runs = nlohmann::json::array();
    for (const auto& run : r.runs)
      runs.push_back({{"capture", run.capture_dir},
                      {"measured_ms", run.measured_ms},
                      {"recorded_ms", run.recorded_ms},
                      {"measured_exposed_comm_ms", run.measured_exposed_ms},
                      {"predicted_ms", run.predicted_ms},
                      {"predicted_compute_ms", run.predicted_compute_ms},
                      {"predicted_exposed_comm_ms", run.predicted_exposed_ms}});
    rows.push_back({{"program", r.program},
                    {"ranks", r.ranks},
                    {"backend", r.backend},
                    {"measured_ms", r.measured_ms},
                    {"predicted_ms", r.predicted_ms},
                    {"error_pct", r.error_pct},
                    {"measured_compute_ms", r.measured_compute_ms},
                    {"predicted_compute_ms", r.predicted_compute_ms},
                    {"measured_exposed_comm_ms", r.measured_exposed_ms},
                    {"predicted_exposed_comm_ms", r.predicted_exposed_ms},
                    {"recorded_ms", r.recorded_ms},
                    {"runs", runs}});
  }
  const nlohmann::json j = {{"study", "capture-validation"},
                            {"median_abs_error_pct", study.median_abs_error_pct},
                            {"worst_abs_error_pct", study.worst_abs_error_pct},
                            {"rows", rows}};
  write_text_file(csv_path, csv);
  write_text_file(json_path, j.dump(1) + "\n");
  return {csv_path, json_path};
}

std::string format_capture_validation(const ValidationStudy& study) {
  std::string s = fmt::format("{:<11} {:>5} {:<7} {:>4} {:>12} {:>12} {:>8} {:>10} {:>10} {:>10} {:>10} {:>10}\n",
                              "program", "ranks", "backend", "runs", "measured ms", "predicted ms", "error",
                              "compute m", "compute p", "exposed m", "exposed p", "recorded");
  for (const auto& r : study.rows)
    s += fmt::format(
        "{:<11} {:>5} {:<7} {:>4} {:>12.2f} {:>12.2f} {:>+7.1f}% {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} "
        "{:>10.2f}\n",
        r.program, r.ranks, r.backend, r.runs.size(), r.measured_ms, r.predicted_ms, r.error_pct, r.measured_compute_ms,
        r.predicted_compute_ms, r.measured_exposed_ms, r.predicted_exposed_ms, r.recorded_ms);
  s += fmt::format(
      "error |predicted - measured| / measured over {} row(s): median {:.1f} %, worst {:.1f} % (measured: the "
      "program's unrecorded steps, median over runs; m/p: measured/predicted, ms a step)\n",
      study.rows.size(), study.median_abs_error_pct, study.worst_abs_error_pct);
  return s;
}

}  // namespace chorus::capture
