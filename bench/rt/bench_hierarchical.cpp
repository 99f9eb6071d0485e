// bench_hierarchical: where the time of a hierarchical all-reduce on shm goes (issue 8's
// executor overhead). Side by side in one run, on the same ranks and buffers, interleaved per
// iteration:
//   flat      one shm all-reduce over the world;
//   by hand   the hierarchical algorithm as four plain group calls in a row (reduce-scatter on
//             dimension 1, then 2, all-gather on 2, then 1), out of place between the buffer
//             and a scratch buffer: the data movement the executor asks of the groups, without
//             the executor;
//   executor  the schedule executor running the baseline schedule of the same all-reduce (one
//             thread per dimension), for each --chunks value.
// Every iteration rewrites the inputs first (not timed) and keeps the slowest rank's time; the
// last iteration's results are checked. Run: chorus launch -n 4 -- bench_hierarchical
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/bench_args.h"
#include "core/split.h"
#include "core/units.h"
#include "rt/runtime.h"
#include "rt/schedule/grid.h"
#include "rt/schedule/schedule_executor.h"
#include "sched/scheduler.h"
#include "sim/run_collective.h"

namespace rt = chorus::rt;
using namespace chorus;

namespace {

const char* kUsage =
    "usage: chorus launch -n N -- bench_hierarchical [--grid 2x2] [--size 64MiB] [--chunks 1,4]\n"
    "                                                [--iters 10] [--warmup 2]\n"
    "Flat shm all-reduce against the same hierarchical all-reduce as four group calls by hand\n"
    "and through the schedule executor (baseline schedule, each --chunks value), float32,\n"
    "interleaved per iteration; times of the slowest rank.\n";

struct Method {
  std::string name;
  std::vector<double> ms;
};

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  return bench::guarded_main("bench_hierarchical", kUsage, argc, argv, [](bench::Args& args) {
    std::string grid_text = "2x2", size_text = "64MiB", chunks_text = "1,4";
    int iters = 10, warmup = 2;
    while (!args.done()) {
      if (args.value("--grid", grid_text) || args.value("--size", size_text) || args.value("--chunks", chunks_text) ||
          args.number("--iters", iters) || args.number("--warmup", warmup))
        continue;
      args.positional();
      throw InputError("bench_hierarchical", "takes no positional arguments");
    }
    if (iters < 1) throw InputError("--iters", fmt::format("must be >= 1, got {}", iters));
    if (warmup < 0) throw InputError("--warmup", fmt::format("must be >= 0, got {}", warmup));
    const std::vector<int> dims = rt::parse_grid(grid_text);
    if (dims.size() != 2) throw InputError("--grid", "give two dimensions (the by-hand form is written for two)");
    std::vector<int> chunk_counts;
    for (const auto& c : split_list(chunks_text)) {
      chunk_counts.push_back(bench::number<int>(c, "--chunks"));
      if (chunk_counts.back() < 1) throw InputError("--chunks", fmt::format("must be >= 1, got {}", c));
    }
    const std::size_t bytes = parse_bytes(size_text, "--size");

    rt::init({"shm"});
    struct Finalize {
      ~Finalize() { rt::finalize(); }
    } finalize_at_exit;
    const rt::RankGrid grid = rt::make_rank_grid(dims, {"shm"});
    const int n = grid.size(), me = grid.rank;
    const std::size_t unit = static_cast<std::size_t>(n) * 4;  // every chunk count's pieces whole
    std::size_t count = bytes / sizeof(float) / unit * unit;
    for (int c : chunk_counts)
      count = count / (unit * static_cast<std::size_t>(c)) * (unit * static_cast<std::size_t>(c));
    if (count == 0) throw InputError("--size", "too small for the grid and chunk counts");

    const net::Network network = rt::grid_network(dims);
    std::vector<rt::ScheduleExecutor> executors;
    for (int c : chunk_counts) {
      sched::Schedule s =
          sched::make_schedule(network, CollectiveKind::kAllReduce, static_cast<double>(count * sizeof(float)), c,
                               sched::parse_scheduler("baseline"));
      s = sim::run_schedule(network, std::move(s)).schedule;  // fills in the per-dimension order
      rt::ExecutorOptions eo;
      eo.network = &network;
      eo.tail_backend = "shm";
      executors.emplace_back(grid, std::move(s), eo);
    }

    std::vector<float> buf(count), scratch(count);
    const std::size_t h0 = count / static_cast<std::size_t>(dims[0]);  // after dimension 1's cut
    const std::size_t h1 = h0 / static_cast<std::size_t>(dims[1]);     // after dimension 2's
    const std::size_t at0 = static_cast<std::size_t>(grid.coords[0]) * h0;
    const std::size_t at1 = at0 + static_cast<std::size_t>(grid.coords[1]) * h1;
    // The four calls, each timed on this rank (rank 0 prints the means).
    std::vector<double> stage_ms(4, 0.0);
    auto by_hand = [&] {
      auto t = std::chrono::steady_clock::now();
      auto lap = [&](int k) {
        const auto now = std::chrono::steady_clock::now();
        stage_ms[static_cast<std::size_t>(k)] += std::chrono::duration<double, std::milli>(now - t).count();
        t = now;
      };
      rt::reduce_scatter(grid.groups[0], buf.data(), scratch.data() + at0, h0, rt::DType::f32, rt::ReduceOp::sum);
      lap(0);
      rt::reduce_scatter(grid.groups[1], scratch.data() + at0, buf.data() + at1, h1, rt::DType::f32, rt::ReduceOp::sum);
      lap(1);
      rt::all_gather(grid.groups[1], buf.data() + at1, scratch.data() + at0, h1, rt::DType::f32);
      lap(2);
      rt::all_gather(grid.groups[0], scratch.data() + at0, buf.data(), h0, rt::DType::f32);
      lap(3);
    };

    std::vector<Method> methods{{"flat shm all-reduce", {}}, {"by hand: 4 group calls", {}}};
    for (int c : chunk_counts) methods.push_back({fmt::format("executor, {} chunk{}", c, c == 1 ? "" : "s"), {}});
    auto run = [&](std::size_t m) {
      if (m == 0)
        rt::all_reduce("shm", buf.data(), buf.data(), count, rt::DType::f32, rt::ReduceOp::sum);
      else if (m == 1)
        by_hand();
      else
        executors[m - 2].run(buf.data(), count);
    };
    // Inputs: small integers, so every sum is exact and every element checkable.
    auto fill = [&] {
      for (std::size_t i = 0; i < count; ++i) buf[i] = static_cast<float>((me + 1) + static_cast<int>(i % 7));
    };
    const int rows = static_cast<int>(methods.size());
    for (int it = 0; it < warmup + iters; ++it)
      for (int k = 0; k < rows; ++k) {
        const auto m = static_cast<std::size_t>((k + it) % rows);  // a different method first each iteration
        fill();
        rt::barrier("shm");
        const auto t0 = std::chrono::steady_clock::now();
        run(m);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        rt::all_reduce("shm", &ms, &ms, 1, rt::DType::f64, rt::ReduceOp::max);
        if (it >= warmup) methods[m].ms.push_back(ms);
        if (it + 1 == warmup && m == 1) std::fill(stage_ms.begin(), stage_ms.end(), 0.0);  // warm-up done
        if (it + 1 == warmup + iters)
          for (std::size_t i = 0; i < count; ++i) {
            const float want = static_cast<float>(n * (n + 1) / 2 + n * static_cast<int>(i % 7));
            if (buf[i] != want)
              throw std::runtime_error(
                  fmt::format("{}: rank {} element {} is {}, expected {}", methods[m].name, me, i, buf[i], want));
          }
      }
    if (me == 0) {
      std::printf(
          "# %d ranks as a %s grid of shm groups, %zu bytes of float32, %d iterations (+%d warm-up), slowest rank\n", n,
          grid_text.c_str(), count * sizeof(float), iters, warmup);
      std::printf("%-26s %10s %10s %10s %14s\n", "method", "mean ms", "median ms", "min ms", "mean / flat");
      const double flat = mean(methods[0].ms);
      for (const auto& m : methods)
        std::printf("%-26s %10.2f %10.2f %10.2f %13.3fx\n", m.name.c_str(), mean(m.ms), median(m.ms),
                    *std::min_element(m.ms.begin(), m.ms.end()), mean(m.ms) / flat);
      const char* stages[] = {"reduce-scatter, dim 1", "reduce-scatter, dim 2", "all-gather, dim 2",
                              "all-gather, dim 1"};
      const std::size_t sizes[] = {count, h0, h0, count};
      std::printf("# by hand, per call on rank 0 (mean ms; bytes = the call's full buffer):\n");
      for (std::size_t k = 0; k < 4; ++k)
        std::printf("#   %-22s %10zu B %8.2f ms\n", stages[k], sizes[k] * sizeof(float), stage_ms[k] / iters);
    }
    return 0;
  });
}
