// bench_fusion: tensor fusion (rt/fusion) against issuing the same all-reduces one by one,
// side by side in one run (MCR-DL Sec. V-E). Per backend, per (B, T): --ops all-reduces of
// --bytes each (f32, sum), timed from the first issue to the last completion, slowest rank;
// blocks of the three ways alternate, --reps times, medians reported:
//   blocking  each all-reduce issued and waited for in turn
//   async     all issued asynchronously on the backend, then all waited for
//   fused     all submitted to an rt::Fusion(B, T), then all waited for
// Results are checked (every element of every operation) in the first repetition.
// Run: chorus launch -n 2 -- bench_fusion [--backends shm,gloo] [--buffers 64KiB,1MiB] ...
//      mpirun -n 2 bench_fusion --backends mpi
// Prints CSV: backend,ranks,ops,bytes,B,T_us,blocking_ms,async_ms,fused_ms,speedup_vs_blocking,speedup_vs_async,buffers
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/split.h"
#include "core/units.h"
#include "rt/fusion/fusion.h"
#include "rt/runtime.h"

namespace rt = chorus::rt;
using rt::DType;
using rt::ReduceOp;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double slowest_ms(const std::string& backend, std::chrono::steady_clock::time_point t0) {
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  rt::all_reduce(backend, &ms, &ms, 1, DType::f64, ReduceOp::max);
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_fusion: fused all-reduces against one by one"};
  std::string backends_arg = "shm,gloo", buffers_arg = "64KiB,256KiB,1MiB,4MiB", cycles_arg = "200";
  int ops = 1000, reps = 7;
  std::string bytes_arg = "4KiB";
  app.add_option("--backends", backends_arg, "backends to measure, one after another");
  app.add_option("--buffers", buffers_arg, "values of B");
  app.add_option("--cycles-us", cycles_arg, "values of T (microseconds)");
  app.add_option("--ops", ops, "all-reduces per measurement");
  app.add_option("--bytes", bytes_arg, "bytes per all-reduce");
  app.add_option("--reps", reps, "repetitions (medians reported)");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto backends = chorus::split_list(backends_arg);
    const std::size_t count = chorus::parse_bytes(bytes_arg, "--bytes") / sizeof(float);
    rt::init(backends);
    const int me = rt::rank("auto"), world = rt::size("auto");
    std::vector<std::vector<float>> data(static_cast<std::size_t>(ops), std::vector<float>(count));
    auto fill = [&] {
      for (std::size_t i = 0; i < data.size(); ++i)
        for (std::size_t e = 0; e < count; ++e) data[i][e] = static_cast<float>((i + e) % 7 + static_cast<std::size_t>(me));
    };
    std::int64_t wrong = 0;
    auto check = [&] {  // after one sum of fill(): sum over ranks of ((i+e)%7 + r)
      for (std::size_t i = 0; i < data.size(); ++i)
        for (std::size_t e = 0; e < count; ++e)
          if (data[i][e] != static_cast<float>(world * static_cast<int>((i + e) % 7) + world * (world - 1) / 2)) {
            ++wrong;
            return;
          }
    };
    if (me == 0)
      std::printf("backend,ranks,ops,bytes,B,T_us,blocking_ms,async_ms,fused_ms,speedup_vs_blocking,speedup_vs_async,buffers\n");
    for (const auto& backend : backends) {
      for (const auto& b_text : chorus::split_list(buffers_arg)) {
        for (const auto& t_text : chorus::split_list(cycles_arg)) {
          const rt::FusionOptions options{.buffer_bytes = static_cast<std::size_t>(chorus::parse_bytes(b_text, "--buffers")),
                                          .cycle_us = std::stoll(t_text)};
          rt::Fusion fusion({backend}, options);
          std::vector<double> blocking, async, fused;
          std::vector<rt::Work> works(static_cast<std::size_t>(ops));
          for (int r = 0; r < reps + 1; ++r) {  // repetition 0: warm-up, results checked
            fill();
            rt::barrier(backend);
            auto t0 = std::chrono::steady_clock::now();
            for (auto& d : data) rt::all_reduce(backend, d.data(), d.data(), count, DType::f32, ReduceOp::sum);
            const double b_ms = slowest_ms(backend, t0);
            if (r == 0) check();
            fill();
            rt::barrier(backend);
            t0 = std::chrono::steady_clock::now();
            for (std::size_t i = 0; i < data.size(); ++i)
              works[i] = rt::all_reduce(backend, data[i].data(), data[i].data(), count, DType::f32, ReduceOp::sum, true);
            for (auto& w : works) w.wait();
            const double a_ms = slowest_ms(backend, t0);
            if (r == 0) check();
            fill();
            rt::barrier(backend);
            t0 = std::chrono::steady_clock::now();
            for (std::size_t i = 0; i < data.size(); ++i)
              works[i] = fusion.all_reduce(backend, data[i].data(), data[i].data(), count, DType::f32, ReduceOp::sum);
            for (auto& w : works) w.wait();
            const double f_ms = slowest_ms(backend, t0);
            if (r == 0) check();
            if (r == 0) continue;
            blocking.push_back(b_ms);
            async.push_back(a_ms);
            fused.push_back(f_ms);
          }
          const auto st = fusion.stats();
          if (me == 0)
            std::printf("%s,%d,%d,%zu,%zu,%lld,%.3f,%.3f,%.3f,%.2f,%.2f,%.1f\n", backend.c_str(), world, ops,
                        count * sizeof(float), options.buffer_bytes, static_cast<long long>(options.cycle_us),
                        median(blocking), median(async), median(fused), median(blocking) / median(fused),
                        median(async) / median(fused), static_cast<double>(st.buffers) / (reps + 1));
          std::fflush(stdout);
        }
      }
    }
    rt::all_reduce(backends.front(), &wrong, &wrong, 1, DType::i64, ReduceOp::sum);
    if (me == 0 && wrong != 0) std::fprintf(stderr, "bench_fusion: %lld wrong results\n", static_cast<long long>(wrong));
    rt::finalize();
    return wrong == 0 ? 0 : 1;
  } catch (const chorus::InputError& e) {
    std::fprintf(stderr, "bench_fusion: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_fusion: %s\n", e.what());
    return 1;
  }
}
