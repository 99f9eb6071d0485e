// rt_schedule_check: the schedule executor on real ranks, every result checked against a
// reference computed here. The grid's dimensions get different bandwidths so that Themis gives
// chunks different dimension orders (and so different nestings). For every scheduler given,
// every chunk count given (default 1, 3 and 4), and
//   - all-reduce: every dtype with sum, and f32 / i32 / f64 with every reduce op, on element
//     counts that chunks x ranks does not divide (the flat tail) and one smaller than that;
//   - reduce-scatter, all-gather and all-to-all: counts that are multiples of chunks x ranks;
// inputs are small integers (exact in every dtype); rank r's element i is (r + 1) + i % 5
// (prod: 1 or 2). The reference reduces them in double over all ranks. All-to-all: rank r's
// element i is a2a_input(r, i); element i of rank m must then be a2a_input(i / B, m * B + i % B)
// with B = count / ranks (block i / B came from that rank, where it was block m).
//   rt_schedule_check --grid 2x2 --dim-backends shm[,gloo] [--schedulers baseline,themis-scf]
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "core/split.h"
#include "rt/dtype.h"
#include "rt/runtime.h"
#include "rt/schedule/grid.h"
#include "rt/schedule/schedule_executor.h"
#include "sched/scheduler.h"
#include "sim/run_collective.h"

namespace rt_schedule_check_program {  // one of the programs of rt_programs.cpp

namespace rt = chorus::rt;
using chorus::CollectiveKind;

namespace {

double input(rt::ReduceOp op, int r, std::size_t i) {
  if (op == rt::ReduceOp::prod) return 1.0 + static_cast<double>((static_cast<std::size_t>(r) + i) % 3 == 0);
  return static_cast<double>(r + 1) + static_cast<double>(i % 5);
}

double reference(rt::ReduceOp op, int n, std::size_t i) {
  double acc = op == rt::ReduceOp::prod ? 1 : op == rt::ReduceOp::min ? 1e300 : op == rt::ReduceOp::max ? -1e300 : 0;
  for (int r = 0; r < n; ++r) {
    const double v = input(op, r, i);
    if (op == rt::ReduceOp::prod)
      acc *= v;
    else if (op == rt::ReduceOp::min)
      acc = std::min(acc, v);
    else if (op == rt::ReduceOp::max)
      acc = std::max(acc, v);
    else
      acc += v;
  }
  return op == rt::ReduceOp::avg ? acc / n : acc;
}

double a2a_input(int r, std::size_t i) { return static_cast<double>((static_cast<std::size_t>(r) * 31 + i * 3) % 113); }

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"rt_schedule_check: Themis schedules executed on real ranks, checked"};
  std::string grid_arg = "2x2", backends_arg = "shm", schedulers_arg = "baseline,themis-scf", chunks_arg = "1,3,4";
  app.add_option("--grid", grid_arg);
  app.add_option("--dim-backends", backends_arg);
  app.add_option("--schedulers", schedulers_arg);
  app.add_option("--chunks", chunks_arg, "chunk counts to try");
  CLI11_PARSE(app, argc, argv);
  int failures = 0, runs = 0;
  try {
    const auto backends = chorus::split_list(backends_arg);
    rt::init(backends);
    const auto dims = rt::parse_grid(grid_arg);
    const rt::RankGrid grid = rt::make_rank_grid(dims, backends);
    const int n = grid.size(), me = grid.rank;
    chorus::net::Network net;
    net.name = "check";
    for (std::size_t d = 0; d < dims.size(); ++d) {
      chorus::net::Dimension dim;
      dim.size = dims[d];
      dim.link_bandwidth_gbps = 400.0 / static_cast<double>(1 << d);  // 400, 200, 100 ...: Themis reorders
      dim.latency_ns = 500;
      net.dims.push_back(dim);
    }
    struct Case {
      CollectiveKind op;
      rt::DType dtype;
      rt::ReduceOp rop;
    };
    std::vector<Case> cases;
    for (rt::DType d : rt::kAllDTypes) cases.push_back({CollectiveKind::kAllReduce, d, rt::ReduceOp::sum});
    for (rt::DType d : {rt::DType::f32, rt::DType::i32, rt::DType::f64})
      for (rt::ReduceOp o : rt::kAllReduceOps)
        if (o != rt::ReduceOp::sum && !(o == rt::ReduceOp::avg && d == rt::DType::i32))
          cases.push_back({CollectiveKind::kAllReduce, d, o});
    cases.push_back({CollectiveKind::kReduceScatter, rt::DType::f32, rt::ReduceOp::sum});
    cases.push_back({CollectiveKind::kReduceScatter, rt::DType::i64, rt::ReduceOp::max});
    cases.push_back({CollectiveKind::kAllGather, rt::DType::f32, rt::ReduceOp::sum});
    cases.push_back({CollectiveKind::kAllGather, rt::DType::bf16, rt::ReduceOp::sum});
    cases.push_back({CollectiveKind::kAllToAll, rt::DType::f32, rt::ReduceOp::sum});
    cases.push_back({CollectiveKind::kAllToAll, rt::DType::u8, rt::ReduceOp::sum});
    for (const auto& sched_name : chorus::split_list(schedulers_arg)) {
      for (const auto& chunks_text : chorus::split_list(chunks_arg)) {
        const int chunks = std::stoi(chunks_text);
        const std::size_t unit = static_cast<std::size_t>(chunks * n);
        for (const auto& c : cases) {
          const std::vector<std::size_t> counts = c.op == CollectiveKind::kAllReduce
                                                      ? std::vector<std::size_t>{unit * 37 + 5, unit - 1}
                                                      : std::vector<std::size_t>{unit * 29};
          for (std::size_t count : counts) {
            const std::size_t eb = rt::dtype_bytes(c.dtype);
            auto schedule = chorus::sched::make_schedule(net, c.op, static_cast<double>(count * eb), chunks,
                                                         chorus::sched::parse_scheduler(sched_name));
            schedule = chorus::sim::run_schedule(net, std::move(schedule)).schedule;  // fills dim_order
            rt::ExecutorOptions eo;
            eo.dtype = c.dtype;
            eo.op = c.rop;
            eo.network = &net;
            eo.tail_backend = backends.front();
            rt::ScheduleExecutor ex(grid, schedule, eo);
            std::vector<char> buf(count * eb);
            const bool gather = c.op == CollectiveKind::kAllGather, a2a = c.op == CollectiveKind::kAllToAll;
            const std::size_t block = count / static_cast<std::size_t>(n);
            for (std::size_t i = 0; i < count; ++i)
              rt::store_from_double(c.dtype, buf.data(), i, gather ? -1 : a2a ? a2a_input(me, i) : input(c.rop, me, i));
            if (gather)
              for (const auto& [b, e] : ex.piece_ranges(count))
                for (std::size_t i = b; i < e; ++i)
                  rt::store_from_double(c.dtype, buf.data(), i, static_cast<double>(i % 101));
            ex.run(buf.data(), count);
            ++runs;
            const double tol = c.rop == rt::ReduceOp::avg ? (c.dtype == rt::DType::f32 ? 1e-6 : 1e-14) : 0;
            for (const auto& [b, e] : ex.owned_ranges(count)) {
              bool bad = false;
              for (std::size_t i = b; i < e && !bad; ++i) {
                const double want =
                    gather ? static_cast<double>(i % 101)
                    : a2a  ? a2a_input(static_cast<int>(i / block), static_cast<std::size_t>(me) * block + i % block)
                           : reference(c.rop, n, i);
                const double got = rt::load_as_double(c.dtype, buf.data(), i);
                if (std::fabs(got - want) > tol * std::fabs(want)) {
                  std::fprintf(stderr,
                               "rank %d: FAIL %s %s %s %s, %d chunks, %zu elements: element %zu is %g, expected %g\n",
                               me, sched_name.c_str(), std::string(compact_name(c.op)).c_str(),
                               std::string(rt::to_string(c.dtype)).c_str(), std::string(rt::to_string(c.rop)).c_str(),
                               chunks, count, i, got, want);
                  ++failures;
                  bad = true;
                }
              }
            }
          }
        }
      }
    }
    rt::finalize();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank stopped: %s\n", e.what());
    return 1;
  }
  if (failures > 0) return 1;
  if (rt::is_initialized()) rt::finalize();
  std::printf("rt_schedule_check: %d schedules on grid %s (%s) checked\n", runs, grid_arg.c_str(),
              backends_arg.c_str());
  return 0;
}

}  // namespace rt_schedule_check_program
