// chorus launch | bench | tune — front ends of the communication runtime (chorus::rt).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <thread>
#include <unistd.h>

#include "apps/chorus/commands.h"
#include "apps/chorus/output_checks.h"
#include "core/error.h"
#include "core/memory_budget.h"
#include "core/split.h"
#include "core/text_file.h"
#include "core/units.h"
#include "rt_bench/bench_report.h"
#include "rt_bench/bench_runner.h"
#include "rt_bench/comm_profile.h"
#include "launch/launcher.h"
#include "rt_bench/measured_topology.h"
#include "rt/rendezvous/mpi_env.h"
#include "rt/runtime.h"
#include "rt/tuning_table.h"
#include "syndicate/topology_yaml.h"

namespace chorus::cli {

namespace {

std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> sizes;
  for (const auto& s : split_list(text)) sizes.push_back(parse_bytes(s, "--sizes"));
  if (sizes.empty()) throw InputError("--sizes", "no size given");
  return sizes;
}

// nccl-tests' sweep: begin, begin x factor, ... up to end. factor >= 2 keeps it to at most 64
// sizes (every size below 2^64 bytes).
std::vector<std::size_t> size_sweep(const std::string& begin_text, const std::string& end_text, int factor) {
  const Bytes begin = parse_bytes(begin_text, "-b/--begin"), end = parse_bytes(end_text, "-e/--end");
  if (factor < 2) throw InputError("-f/--factor", fmt::format("must be an integer >= 2, not {}", factor));
  if (begin == 0) throw InputError("-b/--begin", "must be at least 1 byte (the sweep multiplies it)");
  if (begin > end) throw InputError("-b/--begin", fmt::format("{} is larger than -e/--end ({})", begin_text, end_text));
  const auto f = static_cast<Bytes>(factor);
  std::vector<std::size_t> sizes = {begin};
  while (sizes.back() <= end / f) sizes.push_back(sizes.back() * f);  // the next size is <= end (no overflow)
  return sizes;
}

// Backends that work under the current launcher when the user names none.
std::string default_backends() { return rt::launched_by_mpirun() ? "shm,mpi,gloo" : "shm,gloo"; }

struct CommonOptions {
  std::string backends;
  std::string ops;
  std::string sizes;
  std::string begin, end;  // a sweep instead of --sizes
  int factor = 2;
  int iters = 20;
  int warmup = 5;
  std::string dtype = "f32";
  double timeout_s = -1;
};

void add_common(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("--backends", o.backends, "comma-separated backends (default: shm,gloo; with mpirun also mpi)");
  cmd->add_option("--ops", o.ops,
                  "comma-separated operations: allreduce, allgather, reducescatter, alltoall, "
                  "broadcast, reduce, gather, scatter, sendrecv, barrier, all_gatherv, ... or all")
      ->capture_default_str();
  auto* sizes =
      cmd->add_option("--sizes", o.sizes, "comma-separated message sizes, e.g. 4KiB,1MiB,64MiB")->capture_default_str();
  auto* begin = cmd->add_option("-b,--begin", o.begin,
                                "instead of --sizes, a sweep as nccl-tests' -b/-e/-f: sizes "
                                "begin, begin x factor, ... up to --end");
  auto* end = cmd->add_option("-e,--end", o.end, "largest size of the sweep");
  auto* factor = cmd->add_option("-f,--factor", o.factor, "multiplier between the sweep's sizes, an integer >= 2")
                     ->capture_default_str();
  begin->needs(end);
  end->needs(begin);
  factor->needs(begin);
  for (auto* sweep : {begin, end, factor}) sizes->excludes(sweep);
  cmd->add_option("--iters", o.iters, "timed iterations per size")->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "untimed iterations before timing")->capture_default_str();
  cmd->add_option("--dtype", o.dtype, "element type")->capture_default_str();
  cmd->add_option("--timeout-s", o.timeout_s, "operation timeout in seconds (default 300 or CHORUS_RT_TIMEOUT_S)");
}

rt::BenchOptions to_bench(const CommonOptions& o) {
  rt::BenchOptions b;
  b.backends = split_list(o.backends.empty() ? default_backends() : o.backends);
  b.ops = rt::parse_bench_ops(o.ops);
  b.sizes_bytes = o.begin.empty() ? parse_sizes(o.sizes) : size_sweep(o.begin, o.end, o.factor);
  b.iters = o.iters;
  b.warmup = o.warmup;
  b.dtype = rt::parse_dtype(o.dtype, "--dtype");
  b.validate();
  // Per size: the input and output buffers, the in-place copy and the check's reference.
  const std::size_t largest = *std::max_element(b.sizes_bytes.begin(), b.sizes_bytes.end());
  require_memory(4.0 * static_cast<double>(largest), o.begin.empty() ? "--sizes" : "--end",
                 fmt::format("a benchmark of {} per buffer", format_bytes(largest)));
  return b;
}

void init_runtime(const std::vector<std::string>& backends, double timeout_s) {
  rt::InitOptions init;
  init.timeout_s = timeout_s;
  rt::init(backends, init);
}

}  // namespace

void register_rt_commands(CLI::App& app) {
  // ---- profile ----
  struct ProfileArgs {
    std::vector<std::string> logs;
    bool json = false;
    std::string trace, out;
  };
  static ProfileArgs prof;
  auto* profile = app.add_subcommand("profile",
                                     "Summarise the communication logs of a run (CHORUS_RT_LOG=PREFIX): time per "
                                     "operation and backend, as MCR-DL's Figs. 1 and 12");
  profile->add_option("logs", prof.logs, "log files PREFIX.<rank>.jsonl, or PREFIX (every rank's file)")->required();
  profile->add_flag("--json", prof.json, "print the summary as JSON");
  profile->add_option("--trace", prof.trace,
                      "write a Chrome trace (Perfetto): one process per rank, one thread per backend");
  profile
      ->add_option("-o,--out", prof.out, "write DIR/profile.csv and DIR/profile.svg (time per operation, by backend)")
      ->check(kWritableDir);
  profile->callback([] {
    const auto p = rt::read_comm_logs(prof.logs);
    if (prof.json)
      fmt::print("{}\n", rt::profile_json(p).dump());
    else
      fmt::print("{}", rt::format_profile(p));
    if (!prof.trace.empty()) {
      write_text_file(prof.trace, rt::profile_trace(p).dump());
      if (!prof.json) fmt::print("wrote {}\n", prof.trace);
    }
    if (!prof.out.empty())
      for (const auto& f : rt::write_profile_outputs(p, prof.out))
        if (!prof.json) fmt::print("wrote {}\n", f);
  });

  // ---- launch ----
  auto* launch = app.add_subcommand(
      "launch", "Start N ranks of a program on this host (rendezvous on loopback); they die with the launcher");
  static rt::LaunchOptions launch_opts;
  launch->add_option("-n,--ranks", launch_opts.ranks, "number of ranks")->required();
  launch
      ->add_option("--kill-grace-s", launch_opts.kill_grace_s,
                   "when a rank fails, seconds the others get to report before they are terminated")
      ->capture_default_str();
  launch->add_option("--bind", launch_opts.bind, "pin ranks to CPUs: core, none, or auto (core when ranks <= CPUs)")
      ->capture_default_str();
  launch->add_flag(
      "--tag-output", launch_opts.tag_output,
      "prefix every line of rank r's output with '[r]<stdout>: ' or '[r]<stderr>: ' (whole lines, never mixed)");
  launch->add_flag("--oversubscribe", launch_opts.oversubscribe,
                   "allow more than max(64, 16 x CPUs) ranks (refused without it: usually a typo)");
  launch->add_option("command", launch_opts.command, "program and arguments (after --)")->required();
  launch->footer(
      "Ranks get CHORUS_RANK, CHORUS_LOCAL_RANK, CHORUS_WORLD_SIZE, CHORUS_STORE_ADDR, CHORUS_RUN_ID, torchrun's\n"
      "RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (unless already set) and only\n"
      "descriptors 0, 1, 2. They run in a process group of their own and die with the launcher, even when it\n"
      "is killed with SIGKILL. When a rank fails or the launcher is interrupted, the whole group gets SIGTERM\n"
      "(after --kill-grace-s for a failed rank), then SIGKILL 2 s later; the exit status is the first failing\n"
      "rank's (128 + signal for a signal), a rank killed by a signal taking precedence over ranks that exited\n"
      "with an error before the others were stopped (they usually exit because of it).");
  launch->callback([] {
    const int status = rt::launch(launch_opts);
    // main() maps exceptions to status 2; the launcher must pass the ranks' status through.
    std::fflush(nullptr);
    if (status != 0) std::exit(status);
  });

  // ---- bench ----
  auto* bench = app.add_subcommand("bench",
                                   "Measure time and algorithm/bus bandwidth per backend, operation and size "
                                   "(run under chorus launch or mpirun)");
  static CommonOptions bench_opts;
  static bool bench_json = false, bench_check = false, bench_async = false, bench_algorithms = false;
  bench_opts.ops = "allreduce";
  bench_opts.sizes = "4KiB,64KiB,1MiB,16MiB";
  add_common(bench, bench_opts);
  bench->add_flag("--json", bench_json, "print JSON rows instead of a table");
  bench->add_flag("--check", bench_check,
                  "verify one call per row and placement against a local reference "
                  "(#wrong columns); exit 1 if any element is wrong");
  bench->add_flag("--async", bench_async, "issue asynchronously through the progress queue, then wait");
  bench->add_flag("--algorithms", bench_algorithms,
                  "all_reduce, broadcast, all_gather, reduce_scatter and all_to_all_single also with every named "
                  "algorithm of each backend (rows backend:algorithm)");
  bench->callback([] {
    auto options = to_bench(bench_opts);
    options.check = bench_check;
    options.algorithms = bench_algorithms;
    options.async_op = bench_async;
    options.in_place = true;
    init_runtime(options.backends, bench_opts.timeout_s);
    if (rt::size(options.backends.front()) == 1)
      std::fprintf(stderr,
                   "chorus bench: a world of one rank (no launcher): every operation is a local copy and the bus "
                   "bandwidth is 0; run it under `chorus launch -n N --` or mpirun\n");
    const auto rows = rt::run_bench(options);
    const bool leader = rt::rank(options.backends.front()) == 0;
    rt::finalize();
    if (leader) {
      if (bench_json)
        std::printf("%s\n", rt::bench_json(rows, bench_check).dump(2).c_str());
      else
        std::printf("%s%s", rt::bench_table(rows, bench_check).c_str(), rt::bench_summary(rows, bench_check).c_str());
    }
    std::fflush(stdout);
    const auto failures = rt::bench_failures(rows);
    if (!failures.empty()) {
      for (const auto& f : failures) std::fprintf(stderr, "chorus bench: wrong result: %s\n", f.c_str());
      std::fflush(nullptr);
      std::exit(1);
    }
  });

  // ---- tune ----
  auto* tune = app.add_subcommand("tune",
                                  "Benchmark every backend per operation and size and write a tuning "
                                  "table for the 'auto' backend (run under chorus launch or mpirun)");
  static CommonOptions tune_opts;
  static std::string tune_out = "chorus-tuning.json";
  tune_opts.ops = "allreduce,allgather,reducescatter,alltoall,broadcast";
  tune_opts.sizes = "1KiB,16KiB,256KiB,1MiB,4MiB,16MiB";
  tune_opts.iters = 10;
  tune_opts.warmup = 3;
  add_common(tune, tune_opts);
  static bool tune_backends_only = false;
  static std::string tune_topology_out;
  tune->add_option("-o,--out", tune_out, "tuning table to write (merged into an existing one)")->capture_default_str();
  tune->add_option("--topology-out", tune_topology_out,
                   "also write SYNDICATE's host topology with each backend's latency and bandwidth fitted to these "
                   "measurements (YAML, for chorus plan / run workload --topology)");
  tune->add_flag("--backends-only", tune_backends_only,
                 "measure each backend's own choice only, not each of its named algorithms "
                 "(mpi:ring, mpi:binomial, gloo:bcube, shm:ring_p2p, ...)");
  tune->callback([] {
    auto options = to_bench(tune_opts);
    options.algorithms = !tune_backends_only;
    // The table to merge into, read before any measurement so that a bad one fails first: only a
    // regular file is one (--out /dev/full or a pipe is written, never read as a table).
    rt::TuningTable table;
    if (std::filesystem::is_regular_file(tune_out)) table = rt::TuningTable::load(tune_out);
    init_runtime(options.backends, tune_opts.timeout_s);
    const auto rows = rt::run_bench(options);
    const bool leader = rt::rank(options.backends.front()) == 0;
    rt::finalize();
    if (!leader) return;
    char host[256] = {0};
    ::gethostname(host, sizeof host - 1);
    const std::string machine = fmt::format("{}, {} online cpus", host, std::thread::hardware_concurrency());
    if (table.machine.empty()) table.machine = machine;
    std::map<std::pair<CollectiveKind, int>, std::map<std::size_t, rt::TuningRow>> fresh;
    for (const auto& r : rows) {
      auto& row = fresh[{r.op, r.world_size}][r.bytes];
      row.bytes = r.bytes;
      row.time_us[r.backend] = r.out_of_place.mean_us;
    }
    for (auto& [key, by_size] : fresh) {
      auto& dst = table.tables[key];
      dst.clear();
      for (auto& [bytes, row] : by_size) dst.push_back(row);
    }
    table.save(tune_out);
    std::printf("%s", rt::bench_table(rows, false).c_str());
    std::printf("wrote %s\n", tune_out.c_str());
    if (!tune_topology_out.empty()) {
      const auto measured = rt::measured_topology(rows, rows.front().world_size, machine);
      write_text_file(tune_topology_out, syndicate::topology_yaml(measured.topology, measured.comment()));
      for (const auto& line : measured.comment()) std::printf("%s\n", line.c_str());
      std::printf("wrote %s\n", tune_topology_out.c_str());
    }
  });
}

}  // namespace chorus::cli
