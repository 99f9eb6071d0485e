// chorus sweep SPEC.yaml: a design space's points on every core (and every rank under mpirun),
// one row per point in SQLite and CSV, resumable (docs/sweeps.md).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "apps/chorus/commands.h"
#include "apps/chorus/sweep_points.h"
#include "apps/chorus/sweep_figure.h"
#include "core/error.h"
#include "core/text_file.h"
#include "sweep/ranked_sweep.h"
#include "sweep/result_db.h"
#include "sweep/results_table.h"
#include "sweep/run_sweep.h"

namespace chorus::cli {
namespace {

struct SweepArgs {
  std::string spec;
  std::string db;
  std::string csv;
  int jobs = 0;  // 0: the hardware's cores
  bool dry_run = false;
  std::string plot;  // a directory: sweep.csv, sweep_plot.json and the figure
  std::string x, y, series;
};

std::atomic<bool> g_interrupted{false};  // Ctrl-C: the signal handler's only state

extern "C" void on_interrupt(int) {
  g_interrupted = true;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once (rows stay whole)
  std::signal(SIGTERM, SIG_DFL);
}

std::string with_extension(const std::string& path, const char* ext) {
  return std::filesystem::path(path).replace_extension(ext).string();
}

// One line on a terminal, redrawn at most 4 times a second: points done, time, time left.
class SweepProgress {
 public:
  SweepProgress() : tty_(isatty(STDERR_FILENO) != 0) {}
  ~SweepProgress() {
    if (shown_) fmt::print(stderr, "\r{:<78}\r", "");
  }
  SweepProgress(const SweepProgress&) = delete;
  SweepProgress& operator=(const SweepProgress&) = delete;
  void update(const sweep::Progress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (!tty_ || (p.done < p.total && now - last_ < std::chrono::milliseconds(250))) return;
    last_ = now;
    shown_ = true;
    fmt::print(stderr, "\rsweep: {} of {} points, {:.1f} s{}   ", p.done, p.total, p.elapsed_s,
               p.left_s > 0 ? fmt::format(", about {:.0f} s left", p.left_s) : "");
    std::fflush(stderr);
  }

 private:
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

const SweepCommand& command_of(const sweep::Spec& spec) {
  for (const auto& c : sweep_commands())
    if (c.def.name == spec.command) return c;
  throw std::logic_error("a parsed spec names a known command");
}

// The rows of every point: the view, the CSV, the figure; the failed points' errors.
void finish(const SweepArgs& a, const sweep::Spec& spec, sweep::ResultDb& db, std::size_t& failed,
            std::string& first_error) {
  std::vector<std::string> keys;
  for (const auto& kp : sweep::distinct_points(spec)) keys.push_back(kp.first);
  const auto rows = db.rows(std::set<std::string>(keys.begin(), keys.end()));
  const auto table = sweep::results_table(spec, keys, rows);
  db.make_view(table.params, table.metrics);
  const std::string csv = sweep::to_csv(table);
  write_text_file(a.csv, csv);
  for (const auto* r : table.rows)
    if (!r->error.empty() && failed++ == 0) first_error = r->error;
  if (!a.plot.empty()) draw_sweep_figure(a.plot, csv, table, a.x, a.y, a.series);
}

void run_sweep_command(const SweepArgs& a) {
  std::vector<sweep::CommandDef> defs;
  for (const auto& c : sweep_commands()) defs.push_back(c.def);
  const auto spec = sweep::parse_spec(read_text_file(a.spec, "the sweep spec"), a.spec, defs);
  if (!a.plot.empty()) check_sweep_figure(spec, a.x, a.y, a.series);
  const unsigned cores = std::thread::hardware_concurrency();
  const int workers = a.jobs > 0 ? a.jobs : static_cast<int>(cores ? cores : 1);
  if (a.jobs < 0) throw InputError("--jobs", fmt::format("must be >= 1, got {}", a.jobs));
  const auto points = sweep::distinct_points(spec).size();
  if (a.dry_run) {
    sweep::ResultDb db(a.db);
    std::size_t done = 0;
    const auto held = db.keys();
    for (const auto& kp : sweep::distinct_points(spec)) done += held.count(kp.first);
    fmt::print("{}: {} points of {}, {} in {}, {} to run\n", a.spec, points, spec.command, done, a.db, points - done);
    return;
  }
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  SweepProgress progress;
  sweep::SweepOptions options;
  options.workers = workers;
  options.stop = &g_interrupted;
  options.on_progress = [&progress](const sweep::Progress& p) { progress.update(p); };
  const auto& command = command_of(spec);
  sweep::RankedSweep ranked = sweep::run_ranked_sweep(spec, a.db, command.run, options);
  std::size_t failed = 0;
  std::string first_error;
  if (ranked.writer) {
    fmt::print("{}: {} points of {}: {} run now ({} worker{}{}), {} already in {}; rows in {}, CSV in {}\n", a.spec,
               points, spec.command, ranked.ran, workers, workers == 1 ? "" : "s",
               ranked.ranks > 1 ? fmt::format(" on each of {} ranks", ranked.ranks) : "", ranked.already, a.db, a.db,
               a.csv);
    std::fflush(stdout);
    finish(a, spec, *ranked.writer, failed, first_error);
  }
  ranked.writer.reset();
  if (ranked.stopped) {
    fmt::print(stderr, "chorus: sweep interrupted: the finished points are in {}; run the same command to resume\n",
               a.db);
    std::fflush(stdout);
    std::exit(130);
  }
  if (failed)
    throw InputError(
        first_error.empty() ? a.spec : "",
        fmt::format("{} of {} points failed (their rows hold the errors); the first: {}", failed, points, first_error));
}

}  // namespace

void register_sweep_command(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  auto* s = app.add_subcommand(
      "sweep",
      "Run a design space's points (a YAML spec: grid, points, random samples over the options of sim collective, "
      "sim workload, sim jobs, plan, topo find, topo optimize or topo cost) on every core, and on every rank under "
      "mpirun; one row "
      "per point in SQLite and "
      "CSV; "
      "a sweep stopped at any moment resumes where it stopped (docs/sweeps.md)");
  s->add_option("spec", a->spec, "Sweep spec (YAML): command, fixed, grid, points, random")->required();
  s->footer("Parameters: a command's flags without their dashes (docs/sweeps.md lists them).");
  s->add_option("--db", a->db, "SQLite database of the rows (default: the spec's name with .db); kept between runs");
  s->add_option("--csv", a->csv, "CSV of every point's row in the spec's order (default: the spec's name with .csv)");
  s->add_option("-j,--jobs", a->jobs, "Worker threads (default: the hardware's cores)");
  s->add_flag("--dry-run", a->dry_run, "Count the points, and those the database has, without running any");
  s->add_option("--plot", a->plot, "Directory for a figure of --y against --x (sweep.svg) and its data");
  s->add_option("--x", a->x, "With --plot: the parameter on the x axis");
  s->add_option("--y", a->y, "With --plot: the metric on the y axis (a column of the CSV)");
  s->add_option("--series", a->series, "With --plot: the parameter whose values are the lines (optional)");
  s->callback([a] {
    if (a->db.empty()) a->db = with_extension(a->spec, ".db");
    if (a->csv.empty()) a->csv = with_extension(a->spec, ".csv");
    run_sweep_command(*a);
  });
}

}  // namespace chorus::cli
