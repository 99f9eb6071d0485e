// chorus launch | bench | tune — front ends of the communication runtime (chorus::rt).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <csignal>
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

// At most this many sizes in a sweep (a factor very close to 1 is a typo more often than a plan).
constexpr std::size_t kMaxSweepSizes = 1000;

// nccl-tests' multiplication factor: a number > 1, 2 or 1.5 alike.
double parse_factor(const std::string& text) {
  double f = 0;
  std::size_t used = 0;
  try {
    f = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(f))
    throw InputError("-f/--factor", fmt::format("'{}' is not a number (a multiplier such as 2 or 1.5)", text));
  if (!(f > 1)) throw InputError("-f/--factor", fmt::format("must be larger than 1, not {}", text));
  return f;
}

// nccl-tests' sweep: begin, begin x factor, ... up to end (each size rounded down to a byte, and
// at least one byte larger than the one before).
std::vector<std::size_t> size_sweep(const std::string& begin_text, const std::string& end_text,
                                    const std::string& factor_text) {
  const Bytes begin = parse_bytes(begin_text, "-b/--begin"), end = parse_bytes(end_text, "-e/--end");
  const double f = parse_factor(factor_text);
  if (begin == 0) throw InputError("-b/--begin", "must be at least 1 byte (the sweep multiplies it)");
  if (begin > end) throw InputError("-b/--begin", fmt::format("{} is larger than -e/--end ({})", begin_text, end_text));
  std::vector<std::size_t> sizes = {begin};
  for (;;) {
    const double next =
        std::max(std::floor(static_cast<double>(sizes.back()) * f), static_cast<double>(sizes.back()) + 1);
    if (next > static_cast<double>(end)) break;  // also before any overflow: end < 2^64
    if (sizes.size() == kMaxSweepSizes)
      throw InputError("-f/--factor", fmt::format("{} makes more than {} sizes from {} to {}; use a larger factor",
                                                  factor_text, kMaxSweepSizes, begin_text, end_text));
    sizes.push_back(static_cast<std::size_t>(next));
  }
  return sizes;
}

// Backends that work under the current launcher when the user names none.
std::string default_backends() { return rt::launched_by_mpirun() ? "shm,mpi,gloo" : "shm,gloo"; }

struct CommonOptions {
  std::string backends;
  std::string ops;
  std::string sizes;
  std::string begin, end;  // a sweep instead of --sizes
  std::string factor = "2";
  int iters = 20;
  int warmup = 5;
  std::string dtype = "float";
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
  auto* factor =
      cmd->add_option("-f,--factor", o.factor, "multiplier between the sweep's sizes, a number > 1 (2, 1.5, ...)")
          ->capture_default_str();
  begin->needs(end);
  end->needs(begin);
  factor->needs(begin);
  for (auto* sweep : {begin, end, factor}) sizes->excludes(sweep);
  cmd->add_option("-n,--iters", o.iters, "timed iterations per size")->capture_default_str();
  cmd->add_option("-w,--warmup", o.warmup, "untimed iterations before timing")->capture_default_str();
  cmd->add_option("-d,--dtype", o.dtype,
                  "element type, as nccl-tests names it (int8, uint8, int32, int64, half, float, double, "
                  "bfloat16) or as the runtime does (i8, u8, i32, i64, f16, bf16, f32, f64)")
      ->capture_default_str();
  cmd->add_option("--timeout-s", o.timeout_s, "operation timeout in seconds (default 300 or CHORUS_RT_TIMEOUT_S)");
}

rt::BenchOptions to_bench(const CommonOptions& o) {
  rt::BenchOptions b;
  b.backends = split_list(o.backends.empty() ? default_backends() : o.backends);
  b.ops = rt::parse_bench_ops(o.ops);
  b.sizes_bytes = o.begin.empty() ? parse_sizes(o.sizes) : size_sweep(o.begin, o.end, o.factor);
  b.iters = o.iters;
  b.warmup = o.warmup;
  b.dtype = rt::parse_bench_dtype(o.dtype, "-d/--dtype");
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

// While the bench measures, SIGINT and SIGTERM (chorus launch forwards an interrupt as SIGTERM)
// end the rank at once with status 128 + signal; the leader, which printed every finished row as
// it came, first adds "# Interrupted ..." after them. The line is formatted outside the handler
// (two buffers, switched by an index), which only write()s it.
struct InterruptLine {
  char text[160];
  int size;
};
InterruptLine g_interrupt_lines[2][2];           // [buffer][0: SIGINT, 1: SIGTERM]
volatile sig_atomic_t g_interrupt_current = -1;  // -1: print nothing

void on_bench_interrupt(int sig) {
  const int i = g_interrupt_current;
  if (i >= 0) {
    const InterruptLine& l = g_interrupt_lines[i][sig == SIGINT ? 0 : 1];
    [[maybe_unused]] const ssize_t n = ::write(STDOUT_FILENO, l.text, static_cast<std::size_t>(l.size));
  }
  ::_exit(128 + sig);
}

class BenchInterruptGuard {
 public:
  explicit BenchInterruptGuard(bool print) : print_(print) {
    rows_printed(0);
    struct sigaction sa {};
    sa.sa_handler = on_bench_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~BenchInterruptGuard() { release(); }
  BenchInterruptGuard(const BenchInterruptGuard&) = delete;
  BenchInterruptGuard& operator=(const BenchInterruptGuard&) = delete;

  void rows_printed(std::size_t rows) {
    if (!print_) return;
    const int next = g_interrupt_current == 0 ? 1 : 0;
    for (int s = 0; s < 2; ++s) {
      const std::string line =
          fmt::format("# Interrupted ({}) after {} row(s): the sweep did not finish; the rows above are complete\n",
                      s == 0 ? "SIGINT" : "SIGTERM", rows);
      auto& l = g_interrupt_lines[next][s];
      l.size = static_cast<int>(std::min(line.size(), sizeof l.text));
      std::memcpy(l.text, line.data(), static_cast<std::size_t>(l.size));
    }
    g_interrupt_current = next;
  }

  void release() {
    if (released_) return;
    released_ = true;
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
    g_interrupt_current = -1;
  }

 private:
  bool print_;
  bool released_ = false;
  struct sigaction old_int_ {
  }, old_term_{};
};

}  // namespace

std::string launch_separator_error(CLI::App& app, int argc, const char* const* argv) {
  // chorus launch and chorus capture both take a program and its arguments.
  if (argc < 3 || (std::string(argv[1]) != "launch" && std::string(argv[1]) != "capture")) return {};
  const std::string command = argv[1];
  CLI::App* launch = app.get_subcommand(command);
  // Whether `flag` (a word before the program) is one of chorus launch's that takes a value.
  auto takes_value = [&](const std::string& flag) {
    for (const CLI::Option* o : launch->get_options())
      if (o->check_name(flag)) return o->get_expected_min() > 0;
    return false;
  };
  int program = -1;
  for (int i = 2; i < argc; ++i) {
    const std::string w = argv[i];
    if (w == "--") return {};
    if (w.size() > 1 && w[0] == '-') {
      // -n 2, --ranks 2; not -n2, --ranks=2
      const bool attached = w.find('=') != std::string::npos || (w[1] != '-' && w.size() > 2);
      if (!attached && takes_value(w)) ++i;
      continue;
    }
    program = i;
    break;
  }
  if (program < 0) return {};
  int flag = -1;
  for (int i = program + 1; i < argc && flag < 0; ++i) {
    const std::string w = argv[i];
    if (w == "--") break;  // CLI11 passes what follows to the program
    if (w.size() > 1 && w[0] == '-') flag = i;
  }
  if (flag < 0) return {};
  std::string fixed = "chorus";
  for (int i = 1; i < argc; ++i) fixed += (i == program ? " -- " : " ") + launch::shell_word(argv[i]);
  return fmt::format(
      "chorus {0}: error: '{1}' after the program '{2}' would be read as a flag of chorus {0}: put `--` "
      "between chorus {0}'s flags and the program:\n  {3}\n",
      command, argv[flag], argv[program], fixed);
}

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
                                     "operation and backend, as MCR-DL's Figs. 1 and 12; and the ranks consistently "
                                     "last at the collectives, with the time the others lost waiting for them");
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
  static launch::LaunchOptions launch_opts;
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
  launch
      ->add_option("--stall-timeout", launch_opts.stall_timeout_s,
                   "seconds without any rank starting or ending an operation, while one waits in a call or in "
                   "finalize, after which the ranks are asked for flight records, the diagnosis printed and the job "
                   "stopped (status 124); 0: off")
      ->capture_default_str();
  launch->add_option("command", launch_opts.command, "program and arguments (after --)")->required();
  launch->footer(
      "Ranks get CHORUS_RANK, CHORUS_LOCAL_RANK, CHORUS_WORLD_SIZE, CHORUS_STORE_ADDR, CHORUS_RUN_ID, torchrun's\n"
      "RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (unless already set) and only\n"
      "descriptors 0, 1, 2. They run in a process group of their own and die with the launcher, even when it\n"
      "is killed with SIGKILL. When a rank fails or the launcher is interrupted, the whole group gets SIGTERM\n"
      "(after --kill-grace-s for a failed rank), then SIGKILL 2 s later; the exit status is the first failing\n"
      "rank's (128 + signal for a signal), a rank killed by a signal taking precedence over ranks that exited\n"
      "with an error before the others were stopped (they usually exit because of it).\n"
      "Each rank also gets CHORUS_RT_BEACON (a private directory the launcher watches) and CHORUS_RT_DUMP (where\n"
      "flight records go, unless set: ./chorus-dumps/<UTC time>-<run id>, made when needed). When a rank\n"
      "fails or the job stalls, the launcher sends the living ranks SIGUSR1, waits up to 3 s for their\n"
      "rank-R.json, writes launcher.json there and prints `chorus doctor`'s diagnosis of the directory.");
  launch->callback([] {
    const int status = launch::launch(launch_opts);
    // main() maps exceptions to status 2; the launcher must pass the ranks' status through.
    std::fflush(nullptr);
    if (status != 0) std::exit(status);
  });

  // ---- bench ----
  auto* bench = app.add_subcommand("bench",
                                   "Measure time and algorithm/bus bandwidth per backend, operation and size, "
                                   "as nccl-tests does (run under chorus launch or mpirun)");
  static CommonOptions bench_opts;
  static bool bench_json = false, bench_jsonl = false, bench_check_flag = false, bench_async = false,
              bench_algorithms = false;
  static int bench_check = 1, bench_root = 0;
  static std::string bench_redop = "sum";
  bench_opts.ops = "allreduce";
  bench_opts.sizes = "4KiB,64KiB,1MiB,16MiB";
  add_common(bench, bench_opts);
  auto* json_flag =
      bench->add_flag("--json", bench_json, "print the rows as one JSON array instead of a table, at the end");
  bench
      ->add_flag("--jsonl", bench_jsonl,
                 "print each row as one JSON object per line (JSON Lines) as it is measured, instead of a table")
      ->excludes(json_flag);
  bench
      ->add_option("-c", bench_check,
                   "1: verify one call per row and placement against a local reference (#wrong columns; exit 1 if "
                   "any element is wrong), as nccl-tests does by default; 0: do not")
      ->check(CLI::Range(0, 1))
      ->capture_default_str();
  bench->add_flag("--check", bench_check_flag, "the same as -c 1 (the default)");
  bench->add_option("-o,--op", bench_redop, "reduction of the reducing operations: sum, prod, min, max or avg")
      ->capture_default_str();
  bench->add_option("-r,--root", bench_root, "root rank of the rooted operations (broadcast, reduce, gather, scatter)")
      ->capture_default_str();
  bench->add_flag("--async", bench_async, "issue asynchronously through the progress queue, then wait");
  bench->add_flag("--algorithms", bench_algorithms,
                  "all_reduce, broadcast, all_gather, reduce_scatter and all_to_all_single also with every named "
                  "algorithm of each backend (rows backend:algorithm)");
  bench->footer(
      "Rows are printed as they are measured (flushed, into a pipe or a file too). Interrupted (Ctrl-C\n"
      "to chorus launch, or SIGINT / SIGTERM to the ranks), the sweep stops: the rows printed so far\n"
      "stay, a last line '# Interrupted ...' says so, and the exit status is 128 + the signal.\n"
      "nccl-tests' flags: -b -e -f (sweep), -n (iterations), -w (warm-ups), -c (check, 1 by default),\n"
      "-d (datatype), -o (reduction), -r (root).");
  bench->callback([] {
    auto options = to_bench(bench_opts);
    const bool check = bench_check_flag || bench_check != 0;
    options.check = check;
    options.redop = rt::parse_reduce_op(bench_redop, "-o/--op");
    options.root = bench_root;
    options.validate();
    options.algorithms = bench_algorithms;
    options.async_op = bench_async;
    options.in_place = true;
    init_runtime(options.backends, bench_opts.timeout_s);
    if (rt::size(options.backends.front()) == 1)
      std::fprintf(stderr,
                   "chorus bench: a world of one rank (no launcher): every operation is a local copy and the bus "
                   "bandwidth is 0; run it under `chorus launch -n N --` or mpirun\n");
    for (const auto& b : options.backends)
      if (options.root >= rt::size(b))
        throw InputError("-r/--root", fmt::format("rank {} is not a rank of {} ranks", options.root, rt::size(b)));
    const bool leader = rt::rank(options.backends.front()) == 0;
    const bool table = leader && !bench_json && !bench_jsonl;
    const auto names = rt::bench_backend_names(options);
    if (table) {
      std::fputs(rt::bench_table_header(rt::size(options.backends.front()), options.iters, options.warmup, names, check)
                     .c_str(),
                 stdout);
      std::fflush(stdout);
    }
    std::size_t printed = 0;
    BenchInterruptGuard interrupt(table);
    const auto rows = rt::run_bench(options, [&](const rt::BenchRow& row) {
      if (leader && bench_jsonl) {
        std::printf("%s\n", rt::bench_row_json(row, check).dump().c_str());
        std::fflush(stdout);
      }
      if (!table) return;
      std::fputs(rt::bench_table_row(row, names, check).c_str(), stdout);
      std::fflush(stdout);
      interrupt.rows_printed(++printed);
    });
    interrupt.release();
    rt::finalize();
    if (leader && !bench_jsonl) {
      if (bench_json)
        std::printf("%s\n", rt::bench_json(rows, check).dump(2).c_str());
      else
        std::printf("%s", rt::bench_summary(rows, check).c_str());
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
