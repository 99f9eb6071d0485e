// SYNDICATE's motif microbenchmarks on real ranks (motif_microbench.h).
#include "eval/real/motif_microbench.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/units.h"
#include "rt/runtime_instance.h"
#include "eval/real/plan_execution.h"

namespace chorus::eval {

using rt::DType;
using rt::ReduceOp;

namespace {

workload::Node comm(const std::string& name, CollectiveKind op, double bytes) {
  workload::Node n;
  n.name = name;
  n.kind = workload::NodeKind::kComm;
  n.op = op;
  n.bytes = bytes;
  n.dims = {0};
  return n;
}

using Pick = std::function<bool(int comm, const syndicate::PlanOption&)>;

// Runs `dag` with, for every comm-op, the option `pick` accepts; measured (median run, slowest
// rank) and predicted times, and the check; the row's other fields are the caller's.
MotifBenchRow measure(JobSession& session, const workload::Dag& dag, const Pick& pick, int repeat) {
  auto problem = syndicate::make_problem(dag, session.topology, {});
  syndicate::MethodResult r;
  for (std::size_t c = 0; c < problem.comms.size(); ++c) {
    int found = -1;
    for (std::size_t o = 0; o < problem.comms[c].options.size() && found < 0; ++o)
      if (pick(static_cast<int>(c), problem.comms[c].options[o].option)) found = static_cast<int>(o);
    if (found < 0) throw InputError("run motifs", fmt::format("no such option for '{}'", problem.comms[c].op.name));
    r.plan.push_back(found);
  }
  syndicate::Scheduler scheduler(problem);
  r.sched = {syndicate::Order::kCriticalPath, false};
  r.schedule = scheduler.run(r.plan, r.sched, true);
  auto active = activate(session.job, problem, r);
  Rng jitter(1);
  std::vector<double> times;
  std::string check = "passed";
  for (int run = 0; run <= repeat; ++run) {
    const auto rs = run_once(session.job, problem, *active, {}, jitter, run);
    double t = rs.elapsed_ns;
    session.runtime->issue(session.job.world_backend, rt::calls::all_reduce(&t, &t, 1, DType::f64, ReduceOp::max),
                           false);
    if (run > 0) times.push_back(t);
    if (check == "passed") check = rs.check;
  }
  int bad = check == "passed" ? 0 : 1;
  session.runtime->issue(session.job.world_backend, rt::calls::all_reduce(&bad, &bad, 1, DType::i32, ReduceOp::sum),
                         false);
  if (bad && check == "passed") check = fmt::format("failed on {} rank(s)", bad);
  MotifBenchRow row;
  row.measured_ns = median(times);
  row.predicted_ns = r.schedule.makespan_ns;
  row.check = check;
  return row;
}

}  // namespace

double parse_motif_size(const std::string& text, const std::string& field, int ranks) {
  const Bytes bytes = parse_bytes(text, field);
  const Bytes least = 4 * static_cast<Bytes>(std::max(ranks, 1));
  if (bytes < least)
    throw InputError(field, fmt::format("'{}' is less than one f32 element per rank ({} bytes on {} rank(s)): every "
                                        "rank's block of the all-to-all must hold data",
                                        text, least, std::max(ranks, 1)));
  return static_cast<double>(bytes);
}

MotifBenchReport run_motif_microbench_on_ranks(const MotifBenchOptions& o) {
  require_range(o.repeat, 1, kMaxRepeats, "repeat");
  if (o.sizes.empty()) throw InputError("sizes", "no size given");
  std::vector<double> sizes;
  for (const auto& s : o.sizes) sizes.push_back(parse_motif_size(s, "sizes", 1));  // before the runtime starts
  const double overlap = parse_motif_size(o.overlap_size, "overlap_size", 1);
  // Per comm-op: its input and output buffers, and the check's copy; fig18 runs two at once.
  const double largest_size = *std::max_element(sizes.begin(), sizes.end());
  const bool overlap_larger = 2 * overlap > largest_size;
  const double largest = overlap_larger ? 2 * overlap : largest_size;
  require_memory(4 * largest, overlap_larger ? "overlap_size" : "sizes",
                 fmt::format("a motif of {} per rank", format_bytes(static_cast<Bytes>(largest))));
  JobSession session("host");
  const auto& t = session.topology;
  const int shm = t.path_index("shm"), gloo = t.path_index("gloo");
  if (shm < 0 || gloo < 0) throw InputError("run motifs", "needs the shm and gloo backends");
  const int n = session.job.world;
  for (const auto& s : o.sizes) (void)parse_motif_size(s, "sizes", n);  // every rank refuses it together
  (void)parse_motif_size(o.overlap_size, "overlap_size", n);
  MotifBenchReport report;
  report.rank = session.job.me;
  report.ranks = n;
  report.repeat = o.repeat;
  auto add = [&](const char* fig, const std::string& comm_op, const std::string& variant, double bytes,
                 MotifBenchRow m) {
    m.fig = fig;
    m.comm_op = comm_op;
    m.variant = variant;
    m.size_bytes = bytes;
    report.rows.push_back(std::move(m));
  };
  for (double bytes : sizes) {
    workload::Dag ar;
    ar.name = "all-reduce";
    ar.add(comm("ar", CollectiveKind::kAllReduce, bytes));
    for (const char* algorithm : {"ring", "tree"}) {
      if (std::string(algorithm) == "tree" && n <= 2) continue;
      add("fig16", "all_reduce", algorithm, bytes,
          measure(
              session, ar,
              [&](int, const syndicate::PlanOption& p) {
                return p.algorithm == algorithm && p.segments == 1 && p.path == shm;
              },
              o.repeat));
    }
    workload::Dag aa;
    aa.name = "all-to-all";
    aa.add(comm("aa", CollectiveKind::kAllToAll, bytes));
    for (int k : {1, 2, 4}) {
      if (k > n) continue;
      add("fig17", "all_to_all", fmt::format("{}-way", k), bytes,
          measure(
              session, aa,
              [&](int, const syndicate::PlanOption& p) { return p.spline == k && p.segments == 1 && p.path == shm; },
              o.repeat));
    }
  }
  workload::Dag both;
  both.name = "all-reduce + all-to-all";
  both.add(comm("ar", CollectiveKind::kAllReduce, overlap));
  both.add(comm("aa", CollectiveKind::kAllToAll, overlap));
  for (const auto& [variant, aa_path] :
       {std::pair<std::string, int>{"one backend (shm)", shm}, {"two backends (shm + gloo)", gloo}})
    add("fig18", "all_reduce + all_to_all", variant, overlap,
        measure(
            session, both,
            [&](int c, const syndicate::PlanOption& p) {
              return p.segments == 1 && p.spline == 1 &&
                     (c == 0 ? p.algorithm == "ring" && p.path == shm : p.path == aa_path);
            },
            o.repeat));
  return report;
}

nlohmann::json motif_report_json(const MotifBenchReport& report) {
  auto rows = nlohmann::json::array();
  for (const auto& r : report.rows)
    rows.push_back({{"fig", r.fig},
                    {"case", r.comm_op},
                    {"variant", r.variant},
                    {"size_bytes", r.size_bytes},
                    {"measured_ns", r.measured_ns},
                    {"predicted_ns", r.predicted_ns},
                    {"check", r.check}});
  return {{"rank", report.rank}, {"ranks", report.ranks}, {"repeat", report.repeat}, {"rows", rows}};
}

MotifBenchReport motif_report_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("rows") || !j["rows"].is_array()) throw InputError(where, "no JSON report");
  MotifBenchReport report;
  report.rank = j.value("rank", 0);
  report.ranks = j.value("ranks", 0);
  report.repeat = j.value("repeat", 0);
  for (const auto& row : j["rows"]) {
    MotifBenchRow r;
    r.fig = row["fig"].get<std::string>();
    r.comm_op = row["case"].get<std::string>();
    r.variant = row["variant"].get<std::string>();
    r.size_bytes = row["size_bytes"].get<double>();
    r.measured_ns = row["measured_ns"].get<double>();
    r.predicted_ns = row["predicted_ns"].get<double>();
    r.check = row["check"].get<std::string>();
    report.rows.push_back(std::move(r));
  }
  return report;
}

std::string format_motif_microbench(const MotifBenchReport& report) {
  std::string s = fmt::format("{:<6} {:<24} {:<27} {:>10} {:>12} {:>13} {:>7}  {}\n", "fig", "comm-op", "variant",
                              "size", "measured ms", "predicted ms", "ratio", "check");
  for (const auto& r : report.rows)
    s += fmt::format("{:<6} {:<24} {:<27} {:>10} {:>12.3f} {:>13.3f} {:>7.2f}  {}\n", r.fig, r.comm_op, r.variant,
                     format_bytes(static_cast<Bytes>(r.size_bytes)), r.measured_ns / 1e6, r.predicted_ns / 1e6,
                     r.measured_ns / r.predicted_ns, r.check);
  return s;
}

}  // namespace chorus::eval
