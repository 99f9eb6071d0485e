#include "eval/real/schedule_runner.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <set>
#include <utility>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/text_file.h"
#include "core/stats.h"
#include "core/split.h"
#include "core/units.h"
#include "net/network_yaml.h"
#include "rt/dtype.h"
#include "rt/runtime_instance.h"
#include "rt/schedule/dim_backends.h"
#include "rt/schedule/grid.h"
#include "rt/schedule/schedule_executor.h"
#include "sched/schedule_json.h"
#include "sched/scheduler.h"
#include "sim/chrome_trace.h"
#include "sim/run_collective.h"

namespace chorus::eval {

using rt::choose_dim_backends;
using rt::DType;
using rt::dtype_bytes;
using rt::ExecutorOptions;
using rt::ExecutorRun;
using rt::grid_network;
using rt::load_as_double;
using rt::make_rank_grid;
using rt::parse_dtype;
using rt::parse_grid;
using rt::parse_reduce_op;
using rt::RankGrid;
using rt::reduce_scalar;
using rt::ReduceOp;
using rt::ScheduleExecutor;
using rt::store_from_double;

namespace {

// Input of rank r at element i, and what the collective must leave there. Small integers, so
// that sums, minima, maxima and the products of 1s and 2s are exact in every dtype; avg is
// checked to the dtype's rounding (the hierarchical form divides once per dimension).
double input_value(ReduceOp op, int r, std::size_t i) {
  if (op == ReduceOp::prod) return 1.0 + static_cast<double>((static_cast<std::size_t>(r) + i) % 2 == 0 && i % 3 == 0);
  return static_cast<double>((r + 1) + static_cast<int>(i % 5));
}

double expected_value(ReduceOp op, int n, std::size_t i) {
  double acc = input_value(op, 0, i);
  for (int r = 1; r < n; ++r) acc = reduce_scalar(op, acc, input_value(op, r, i));
  return op == ReduceOp::avg ? acc / n : acc;
}

// All-to-all input of rank r at element i: 1..97, exact in every dtype (i8 included), different
// for neighbouring elements and for the same element on neighbouring ranks.
double exchange_value(int r, std::size_t i) {
  return static_cast<double>((static_cast<std::size_t>(r) * 13 + i * 7) % 97 + 1);
}

double tolerance(DType d, ReduceOp op) {
  if (op != ReduceOp::avg) return 0;
  switch (d) {
    case DType::f16:
      return 2e-3;
    case DType::bf16:
      return 1e-2;
    case DType::f32:
      return 1e-6;
    case DType::f64:
      return 1e-14;
    default:
      return 0.5;  // integer averages truncate per dimension
  }
}

// The job's network: the topology, the grid, or without either the world as a 2 x N/2 grid (N
// even and >= 4), else 1-D.
net::Network job_network(const ScheduleRunOptions& o, int world_size) {
  std::string grid_text = o.grid;
  if (o.topology.empty() && grid_text.empty())
    grid_text =
        world_size >= 4 && world_size % 2 == 0 ? fmt::format("2x{}", world_size / 2) : fmt::format("{}", world_size);
  return grid_text.empty() ? net::load_network(o.topology) : grid_network(parse_grid(grid_text));
}

// The saved schedule, or one made for the network by the scheduler asked for.
sched::Schedule job_schedule(const ScheduleRunOptions& o, const net::Network& network) {
  if (!o.schedule_file.empty()) return sched::load_schedule_file(o.schedule_file, network);
  const CollectiveKind op = coll::parse_collective_op(o.op, "op");
  const auto spec = sched::parse_scheduler(o.scheduler);
  if (spec.kind == sched::SchedulerKind::kIdeal)
    throw InputError("scheduler",
                     "the ideal is a bound, not a schedule to run; use baseline, themis-fifo or themis-scf");
  const double bytes = static_cast<double>(parse_bytes(o.size, "size"));
  // The schedule and its records take about 200 bytes per chunk and dimension.
  require_range(o.chunks, 1, sim::kMaxChunks, "chunks");
  require_memory(bytes * 3 + 200.0 * o.chunks * static_cast<double>(network.dims.size()), "size",
                 fmt::format("a collective of {} in {} chunks (buffer, staging, schedule)", o.size, o.chunks));
  if (!(o.threshold_divisor > 0)) throw InputError("threshold_divisor", "must be positive");
  sched::ThemisOptions themis;
  themis.threshold_divisor = o.threshold_divisor;
  return sched::make_schedule(network, op, bytes, o.chunks, spec, themis);
}

// The simulator's prediction of exactly what the executor will run: the schedule with its
// per-dimension order (the simulator's when it has none) enforced.
sim::CollectiveRun predict(const net::Network& network, sched::Schedule schedule) {
  sim::SimOptions sim_options;
  sim_options.record_stages = true;
  if (schedule.dim_order.empty()) schedule = sim::run_schedule(network, std::move(schedule), sim_options).schedule;
  sim_options.enforce_dim_order = true;
  return sim::run_schedule(network, std::move(schedule), sim_options);
}

// What each rank's buffer holds before the collective, and must hold after it.
struct Data {
  DType dtype = DType::f32;
  ReduceOp rop = ReduceOp::sum;
  bool gather = false, a2a = false;
  int me = 0, n = 1;
  std::size_t count = 0, block = 0;  // elements; all-to-all: elements per peer

  void fill(std::vector<char>& buf, const ScheduleExecutor& executor) const {
    if (gather) {
      for (std::size_t i = 0; i < count; ++i) store_from_double(dtype, buf.data(), i, -1);
      for (const auto& [b, e] : executor.piece_ranges(count))
        for (std::size_t i = b; i < e; ++i) store_from_double(dtype, buf.data(), i, static_cast<double>(i % 251 + 1));
    } else if (a2a) {
      for (std::size_t i = 0; i < count; ++i) store_from_double(dtype, buf.data(), i, exchange_value(me, i));
    } else {
      for (std::size_t i = 0; i < count; ++i) store_from_double(dtype, buf.data(), i, input_value(rop, me, i));
    }
  }
  double want(std::size_t i) const {
    // All-to-all: element i came from rank i / block, where it was element me x block + i % block.
    return gather ? static_cast<double>(i % 251 + 1)
           : a2a  ? exchange_value(static_cast<int>(i / block), static_cast<std::size_t>(me) * block + i % block)
                  : expected_value(rop, n, i);
  }
};

// The last iteration checked: "passed", or the first wrong element of the first rank with one.
// Collective.
std::string check_result(rt::Runtime& runtime, const Data& data, const std::vector<char>& buf,
                         const ScheduleExecutor& executor, const std::string& world) {
  double bad[3] = {-1, 0, 0};  // first wrong element or -1, got, expected
  const double tol = tolerance(data.dtype, data.rop);
  for (const auto& [b, e] : executor.owned_ranges(data.count)) {
    for (std::size_t i = b; i < e && bad[0] < 0; ++i) {
      const double want = data.want(i);
      const double got = load_as_double(data.dtype, buf.data(), i);
      if (!(std::fabs(got - want) <= tol * std::max(1.0, std::fabs(want)))) {
        bad[0] = static_cast<double>(i);
        bad[1] = got;
        bad[2] = want;
      }
    }
  }
  std::vector<double> all_bad(3 * static_cast<std::size_t>(data.n));
  runtime.issue(world, rt::calls::all_gather(bad, all_bad.data(), 3, DType::f64), false);
  for (int r = 0; r < data.n; ++r) {
    const double* b = &all_bad[3 * static_cast<std::size_t>(r)];
    if (b[0] >= 0) return fmt::format("rank {} element {}: got {} expected {}", r, b[0], b[1], b[2]);
  }
  return "passed";
}

// Rank 0's Chrome traces: the last iteration as measured, and the simulator's prediction.
void write_traces(const ScheduleRunOptions& o, const net::Network& network, const sim::CollectiveRun& predicted,
                  const ExecutorRun& last) {
  if (!o.trace.empty()) {
    sim::CollectiveRun measured{predicted.schedule, {}};
    measured.result.time_ns = last.time_ns;
    for (const auto& s : last.stages)
      measured.result.stages.push_back(
          sim::StageRecord{s.chunk, s.stage, s.phase, s.dim, s.arrive_ns, s.start_ns, s.end_ns, s.bytes_sent, 0});
    write_json_file(o.trace, sim::chrome_trace(network, measured));
  }
  if (!o.sim_trace.empty()) write_json_file(o.sim_trace, sim::chrome_trace(network, predicted));
}

// A report's per-dimension rows: measured (busy: the slowest rank's) beside predicted.
std::vector<ScheduleDimRow> dim_rows(const std::vector<int>& dims, const RankGrid& grid,
                                     const std::vector<rt::DimBackendChoice>& choices, const ExecutorRun& last,
                                     const std::vector<double>& busy, const sim::CollectiveRun& predicted) {
  std::vector<ScheduleDimRow> rows;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    ScheduleDimRow row;
    row.dim = d + 1;
    row.size = dims[d];
    row.backend = grid.backends[d];
    row.backend_chosen_by = choices[d].chosen_by;
    row.backend_estimate_us = choices[d].estimate_us;
    row.bytes_per_rank = last.dims[d].bytes_per_rank;
    row.busy_ns = busy[d];
    row.stages = last.dims[d].stages;
    row.predicted_bytes_per_rank = predicted.result.dims[d].bytes_per_npu;
    row.predicted_busy_ns = predicted.result.dims[d].busy_ns;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

ScheduleReport run_schedule_on_ranks(const ScheduleRunOptions& o) {
  const DType dtype = parse_dtype(o.dtype, "dtype");
  const ReduceOp rop = parse_reduce_op(o.reduce, "reduce");
  if (!o.topology.empty() && !o.grid.empty()) throw InputError("grid", "give a topology or a grid, not both");
  auto dim_backends = split_list(o.dim_backends);
  if (dim_backends.empty()) throw InputError("dim_backends", "give at least one backend");
  std::set<std::string> wanted(dim_backends.begin(), dim_backends.end());
  rt::Runtime runtime(std::vector<std::string>(wanted.begin(), wanted.end()), rt::InitOptions{});
  const net::Network network = job_network(o, runtime.size(runtime.backends().front()));
  require_range(o.iters, 1, kMaxIterations, "iters");
  require_range(o.warmup, 0, kMaxIterations, "warmup");
  sched::Schedule schedule = job_schedule(o, network);
  const std::size_t eb = dtype_bytes(dtype);
  const double size_bytes = schedule.size_bytes;
  if (!(size_bytes >= static_cast<double>(eb)) || std::fmod(size_bytes, static_cast<double>(eb)) != 0)
    throw InputError("size", fmt::format("{} bytes is not a whole number of {} elements", size_bytes, o.dtype));
  const sim::CollectiveRun predicted = predict(network, std::move(schedule));

  // The ranks: a grid of groups, one per dimension. "auto" dimensions: the backend the tuning
  // table says is fastest for that dimension's own group operations (the same choice on every
  // rank: it depends on the schedule and table only).
  std::vector<int> dims;
  for (const auto& d : network.dims) dims.push_back(d.size);
  const auto choices =
      choose_dim_backends(predicted.schedule, dims, dim_backends, runtime.tuning_table(), runtime.backends());
  std::vector<std::string> chosen;
  for (const auto& c : choices) chosen.push_back(c.backend);
  const RankGrid grid = make_rank_grid(runtime, dims, chosen);
  const std::string world = runtime.backends().front();
  ExecutorOptions eo;
  eo.dtype = dtype;
  eo.op = rop;
  eo.network = &network;
  eo.emulate = o.emulate;
  eo.tail_backend = world;
  ScheduleExecutor executor(grid, predicted.schedule, eo);

  // Iterations: inputs written before each (not timed), the slowest rank's time kept.
  const auto count = static_cast<std::size_t>(size_bytes) / eb;
  Data data;
  data.dtype = dtype;
  data.rop = rop;
  data.gather = predicted.schedule.op == CollectiveKind::kAllGather;
  data.a2a = predicted.schedule.op == CollectiveKind::kAllToAll;
  data.me = grid.rank;
  data.n = grid.size();
  data.count = count;
  data.block = count / static_cast<std::size_t>(data.n);
  std::vector<char> buf(count * eb);
  std::vector<double> times;
  ExecutorRun last;
  for (int it = 0; it < o.warmup + o.iters; ++it) {
    data.fill(buf, executor);
    last = executor.run(buf.data(), count);
    double t = last.time_ns;
    runtime.issue(world, rt::calls::all_reduce(&t, &t, 1, DType::f64, ReduceOp::max), false);
    if (it >= o.warmup) times.push_back(t);
  }
  const std::string check = check_result(runtime, data, buf, executor, world);
  std::vector<double> busy;
  for (const auto& d : last.dims) busy.push_back(d.busy_ns);
  if (!busy.empty())
    runtime.issue(world, rt::calls::all_reduce(busy.data(), busy.data(), busy.size(), DType::f64, ReduceOp::max),
                  false);

  ScheduleReport report;
  report.rank = grid.rank;
  report.network = network.name;
  report.grid = fmt::format("{}", fmt::join(dims, "x"));
  report.ranks = grid.size();
  report.op = compact_name(predicted.schedule.op);
  report.size_bytes = size_bytes;
  report.chunks = predicted.schedule.num_chunks;
  report.scheduler = predicted.schedule.scheduler;
  report.dtype = o.dtype;
  report.reduce = o.reduce;
  report.emulate = o.emulate;
  report.iters = o.iters;
  report.time_ns = median(times);
  report.times_ns = times;
  report.predicted_time_ns = predicted.result.time_ns;
  report.ratio = report.time_ns / predicted.result.time_ns;
  report.check = check;
  report.tail_elements = count - executor.main_elements(count);
  report.dims = dim_rows(dims, grid, choices, last, busy, predicted);
  if (grid.rank == 0) write_traces(o, network, predicted, last);
  return report;
}

nlohmann::json to_json(const ScheduleReport& r) {
  nlohmann::json j;
  j["rank"] = r.rank;
  j["network"] = r.network;
  j["grid"] = r.grid;
  j["ranks"] = r.ranks;
  j["op"] = r.op;
  j["size_bytes"] = r.size_bytes;
  j["chunks"] = r.chunks;
  j["scheduler"] = r.scheduler;
  j["dtype"] = r.dtype;
  j["reduce"] = r.reduce;
  j["emulate"] = r.emulate;
  j["iters"] = r.iters;
  j["time_ns"] = r.time_ns;
  j["times_ns"] = r.times_ns;
  j["predicted_time_ns"] = r.predicted_time_ns;
  j["ratio"] = r.ratio;
  j["check"] = r.check;
  j["tail_elements"] = r.tail_elements;
  j["dims"] = nlohmann::json::array();
  for (const auto& d : r.dims)
    j["dims"].push_back({{"dim", d.dim},
                         {"size", d.size},
                         {"backend", d.backend},
                         {"backend_chosen_by", d.backend_chosen_by},
                         {"backend_estimate_us", d.backend_estimate_us},
                         {"bytes_per_rank", d.bytes_per_rank},
                         {"busy_ns", d.busy_ns},
                         {"stages", d.stages},
                         {"predicted_bytes_per_rank", d.predicted_bytes_per_rank},
                         {"predicted_busy_ns", d.predicted_busy_ns}});
  return j;
}

std::string format_schedule_report(const ScheduleReport& r) {
  std::string s = fmt::format("{} on {} ranks ({}), {} of {} in {} chunks, scheduler {}, {} {}{}\n", r.network, r.ranks,
                              r.grid, r.op, format_bytes(static_cast<Bytes>(r.size_bytes)), r.chunks, r.scheduler,
                              r.dtype, r.reduce, r.emulate ? ", emulated" : "");
  s += fmt::format(
      "  measured   {:>12.3f} ms (median of {}, slowest rank)\n  predicted  {:>12.3f} ms\n  ratio      {:>12.3f}\n  "
      "check      {}\n",
      r.time_ns / 1e6, r.iters, r.predicted_time_ns / 1e6, r.ratio, r.check);
  s += fmt::format("  {:<4} {:>5} {:<8} {:>14} {:>12} {:>14}\n", "dim", "size", "backend", "bytes/rank", "busy ms",
                   "predicted ms");
  for (const auto& d : r.dims)
    s += fmt::format("  {:<4} {:>5} {:<8} {:>14.0f} {:>12.3f} {:>14.3f}\n", d.dim, d.size, d.backend, d.bytes_per_rank,
                     d.busy_ns / 1e6, d.predicted_busy_ns / 1e6);
  for (const auto& d : r.dims)
    if (d.backend_chosen_by != "given") s += fmt::format("  dim {} on {}: {}\n", d.dim, d.backend, d.backend_chosen_by);
  return s;
}

}  // namespace chorus::eval
