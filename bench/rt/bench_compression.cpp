// bench_compression: the compressed collectives (rt/compression, zfp, MCR-DL Sec. V) against
// the plain runtime calls, side by side in one run. Per backend, operation (all_gather,
// all_reduce sum), size (bytes of f32 per rank) and bound ("none" = the plain rt call): the
// time of one blocking operation on smooth-ish f32 data (slowest rank; the bounds alternate
// within each of --reps repetitions after one warm-up, medians reported), the bytes all ranks
// sent (raw = uncompressed, wire = compressed blocks plus size messages, as counted by
// compressed::Stats) and the largest error against the plain operation's result.
// Run: chorus launch -n 2 -- bench_compression [--backends shm,gloo] [--sizes 64KiB,...] ...
//      mpirun -n 2 bench_compression --backends mpi
// Prints CSV: backend,ranks,op,bytes,bound,median_ms,speedup_vs_plain,raw_bytes,wire_bytes,ratio,max_err
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/split.h"
#include "core/units.h"
#include "rt/compression/compressed.h"
#include "rt/runtime.h"

namespace rt = chorus::rt;
namespace cz = chorus::rt::compressed;
using rt::DType;
using rt::ReduceOp;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double slowest(const std::string& backend, double ms) {
  rt::all_reduce(backend, &ms, &ms, 1, DType::f64, ReduceOp::max);
  return ms;
}

// Two slow waves, a rank offset and a little noise, as in tests/rt/compression.
void fill(std::vector<float>& x, int rank) {
  std::uint64_t s = 0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(rank + 1);
  for (std::size_t i = 0; i < x.size(); ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    const double noise = static_cast<double>(s >> 11) * 0x1.0p-53 * 2 - 1;
    const double d = static_cast<double>(i);
    x[i] = static_cast<float>(40 * std::sin(0.002 * d + rank) + 25 * std::cos(0.017 * d) + 5.0 * rank + 0.02 * noise);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_compression: compressed all_gather / all_reduce against the plain calls"};
  std::string backends_arg = "shm,gloo", sizes_arg = "64KiB,256KiB,1MiB,4MiB,16MiB,64MiB";
  std::string bounds_arg = "none,abs:1e-2,abs:1e-4,abs:1e-6", ops_arg = "all_gather,all_reduce";
  int reps = 5;
  app.add_option("--backends", backends_arg, "backends to measure, one after another");
  app.add_option("--sizes", sizes_arg, "bytes of f32 per rank");
  app.add_option("--bounds", bounds_arg, "none (the plain rt call) and error bounds (abs:<tol>, prec:<bits>)");
  app.add_option("--ops", ops_arg, "all_gather, all_reduce");
  app.add_option("--reps", reps, "timed repetitions (medians reported)")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    const auto backends = chorus::split_list(backends_arg);
    std::vector<std::string> bound_names = chorus::split_list(bounds_arg);
    std::vector<cz::ErrorBound> bounds;  // [k] for bound_names[k]; unused for "none"
    for (const auto& b : bound_names)
      bounds.push_back(b == "none" ? cz::ErrorBound{} : cz::parse_error_bound(b, "--bounds"));
    const auto ops = chorus::split_list(ops_arg);
    for (const auto& op : ops)
      if (op != "all_gather" && op != "all_reduce")
        throw chorus::InputError("--ops", "'" + op + "' is not all_gather or all_reduce");
    std::vector<std::size_t> counts;
    for (const auto& s : chorus::split_list(sizes_arg))
      counts.push_back(static_cast<std::size_t>(chorus::parse_bytes(s, "--sizes") / sizeof(float)));
    rt::init(backends);
    const int me = rt::rank(backends.front()), p = rt::size(backends.front());
    const auto P = static_cast<std::size_t>(p);
    if (me == 0)
      std::printf("backend,ranks,op,bytes,bound,median_ms,speedup_vs_plain,raw_bytes,wire_bytes,ratio,max_err\n");
    for (const auto& backend : backends) {
      for (const auto& op : ops) {
        const bool gather = op == "all_gather";
        for (const std::size_t count : counts) {
          std::vector<float> in(count), reference(gather ? P * count : count), out(reference.size());
          fill(in, me);
          if (gather)
            rt::all_gather(backend, in.data(), reference.data(), count, DType::f32);
          else
            rt::all_reduce(backend, in.data(), reference.data(), count, DType::f32, ReduceOp::sum);
          const std::size_t nb = bound_names.size();
          std::vector<std::vector<double>> times(nb);
          std::vector<cz::Stats> stats(nb);
          std::vector<double> max_err(nb, 0.0);
          for (int r = 0; r <= reps; ++r) {  // r = 0: warm-up (bytes and errors recorded)
            for (std::size_t k = 0; k < nb; ++k) {
              const bool plain = bound_names[k] == "none";
              rt::barrier(backend);
              const auto t0 = std::chrono::steady_clock::now();
              cz::Stats* st = r == 0 ? &stats[k] : nullptr;
              if (gather) {
                if (plain)
                  rt::all_gather(backend, in.data(), out.data(), count, DType::f32);
                else
                  cz::all_gather(backend, in.data(), out.data(), count, DType::f32, bounds[k], st);
              } else {
                if (plain)
                  rt::all_reduce(backend, in.data(), out.data(), count, DType::f32, ReduceOp::sum);
                else
                  cz::all_reduce(backend, in.data(), out.data(), count, DType::f32, ReduceOp::sum, bounds[k], st);
              }
              const double ms = slowest(
                  backend, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
              if (r == 0) {
                double e = 0;
                for (std::size_t i = 0; i < out.size(); ++i)
                  e = std::max(e, std::fabs(static_cast<double>(out[i]) - static_cast<double>(reference[i])));
                max_err[k] = e;
                continue;
              }
              times[k].push_back(ms);
            }
          }
          // Bytes over all ranks; the plain call sends what the compressed one counts as raw.
          std::vector<double> totals;
          for (std::size_t k = 0; k < nb; ++k) {
            totals.push_back(static_cast<double>(stats[k].raw_bytes));
            totals.push_back(static_cast<double>(stats[k].wire_bytes));
            totals.push_back(max_err[k]);
          }
          std::vector<double> sums(totals.size()), maxes(totals.size());
          rt::all_reduce(backend, totals.data(), sums.data(), totals.size(), DType::f64, ReduceOp::sum);
          rt::all_reduce(backend, totals.data(), maxes.data(), totals.size(), DType::f64, ReduceOp::max);
          double raw_all = 0, plain_ms = 0;
          for (std::size_t k = 0; k < nb; ++k) {
            raw_all = std::max(raw_all, sums[3 * k]);
            if (bound_names[k] == "none") plain_ms = median(times[k]);
          }
          if (raw_all == 0)  // no compressed bound measured: what the plain call sends per rank
            raw_all = static_cast<double>(count * sizeof(float)) * (P > 1 ? static_cast<double>(P) : 0.0);
          for (std::size_t k = 0; k < nb && me == 0; ++k) {
            const bool plain = bound_names[k] == "none";
            const double wire = plain ? raw_all : sums[3 * k + 1];
            const double ms = median(times[k]);
            std::printf("%s,%d,%s,%zu,%s,%.3f,%.2f,%.0f,%.0f,%.2f,%.3g\n", backend.c_str(), p, op.c_str(),
                        count * sizeof(float), bound_names[k].c_str(), ms, plain_ms > 0 ? plain_ms / ms : 0.0, raw_all,
                        wire, wire > 0 ? raw_all / wire : 0.0, maxes[3 * k + 2]);
          }
          std::fflush(stdout);
        }
      }
    }
    rt::finalize();
    return 0;
  } catch (const chorus::InputError& e) {
    std::fprintf(stderr, "bench_compression: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_compression: %s\n", e.what());
    return 1;
  }
}
