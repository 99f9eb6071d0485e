// bench_rt_overhead: cost of the chorus::rt API over calling Open MPI directly (MCR-DL's claim
// C3), measured side by side in one run: for each size, blocks of direct MPI_Allreduce and of
// chorus::rt::all_reduce("mpi", ...) alternate, and the medians of the per-block mean times are
// compared. Also reports the asynchronous path (issue with async_op, then wait), which hops
// through the backend's progress thread. Run: mpirun -n 2 bench_rt_overhead [--reps R]
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "rt/runtime.h"

namespace rt = chorus::rt;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
double block_us(int iters, F&& f) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) f();
  const double local = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
  double slowest = 0;
  MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

// What one locked read-modify-write (lock cmpxchg) costs here, uncontended: the synchronous
// path's claim of the backend is one. Reported to explain the small-message overhead.
double locked_rmw_ns() {
  static std::atomic<bool> flag{false};
  const int n = 2000000;
  auto time = [&](auto&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) f();
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
  };
  double best = 1e9;
  for (int r = 0; r < 5; ++r) {
    const double locked = time([] {
      bool expected = false;
      flag.compare_exchange_strong(expected, true, std::memory_order_acquire);
      flag.store(false, std::memory_order_release);
    });
    const double plain = time([] {
      flag.store(true, std::memory_order_relaxed);
      flag.store(false, std::memory_order_release);
    });
    best = std::min(best, locked - plain);
  }
  return best;
}

}  // namespace

constexpr const char* kUsage =
    "Usage: mpirun -n 2 bench_rt_overhead [--reps R] [--max-bytes B] [--sizes B1,B2,...] [--iters I]\n"
    "  Direct MPI_Allreduce against chorus::rt::all_reduce(\"mpi\") (sync and async), alternated blocks,\n"
    "  medians of R blocks (default 15, at least 3) per size up to B bytes; the sizes (bytes, multiples\n"
    "  of 4) default to 8 B, 64 B, 1, 2, 4, 8, 12 and 16 KiB, 256 KiB, 1, 16 and 64 MiB. A block is I calls\n"
    "  (default 2000 up to 16 KiB, 100 up to 1 MiB, 5 beyond; fewer keep blocks clear of a loaded\n"
    "  machine's preemptions, so that the medians still show the calls' own times).\n";

// "--sizes 4096,8192": byte counts of float32 all-reduces.
std::vector<std::size_t> parse_sizes(const std::string& text) {
  std::vector<std::size_t> sizes;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const auto bytes = chorus::bench::number<std::size_t>(text.substr(at, comma - at), "--sizes");
    if (bytes == 0 || bytes % sizeof(float) != 0)
      throw chorus::InputError("--sizes", "each size is a positive multiple of 4 bytes (float32 elements)");
    sizes.push_back(bytes);
    at = comma + 1;
  }
  return sizes;
}

int run(chorus::bench::Args& args) {
  int reps = 15;
  std::size_t max_bytes = std::size_t{1} << 40;
  std::string sizes_text;
  int fixed_iters = 0;
  while (!args.done())
    if (!args.number("--reps", reps) && !args.number("--max-bytes", max_bytes) && !args.value("--sizes", sizes_text) &&
        !args.number("--iters", fixed_iters))
      throw chorus::InputError(args.positional(), "unexpected argument (--help lists the options)");
  reps = std::max(3, reps);
  if (fixed_iters < 0) throw chorus::InputError("--iters", "must be positive");
  rt::init({"mpi"});  // initialises MPI with thread support
  int me = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  // The runtime's mpi backend works on a duplicate of MPI_COMM_WORLD; so does the direct call.
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  // 2-16 KiB: where the mpi backend's calls ride inside the agreement exchange in several parts.
  const std::vector<std::size_t> sizes =
      sizes_text.empty()
          ? std::vector<std::size_t>{8, 64, 1024, 2048, 4096, 8192, 12288, 16384, 262144, 1 << 20, 16 << 20, 64 << 20}
          : parse_sizes(sizes_text);
  if (me == 0) std::printf("# one uncontended locked RMW (lock cmpxchg): %.1f ns\n", locked_rmw_ns());
  if (me == 0)
    std::printf("%10s %6s %12s %12s %12s %10s %10s\n", "bytes", "ranks", "direct_us", "rt_sync_us", "rt_async_us",
                "sync_ovh%", "async_ovh%");
  for (std::size_t bytes : sizes) {
    if (bytes > max_bytes) break;
    const std::size_t count = bytes / sizeof(float);
    std::vector<float> in(count, 1.0f), out(count, 0.0f);
    const int iters = fixed_iters > 0 ? fixed_iters : bytes <= 16384 ? 2000 : bytes <= (1 << 20) ? 100 : 5;
    auto direct = [&] { MPI_Allreduce(in.data(), out.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, dup); };
    auto sync = [&] { rt::all_reduce("mpi", in.data(), out.data(), count, rt::DType::f32, rt::ReduceOp::sum); };
    auto async = [&] {
      rt::all_reduce("mpi", in.data(), out.data(), count, rt::DType::f32, rt::ReduceOp::sum, true).wait();
    };
    for (int w = 0; w < 2; ++w) block_us(iters, direct), block_us(iters, sync), block_us(iters, async);
    std::vector<double> d, s, a;
    for (int r = 0; r < reps; ++r) {
      d.push_back(block_us(iters, direct));
      s.push_back(block_us(iters, sync));
      a.push_back(block_us(iters, async));
    }
    const double dm = median(d), sm = median(s), am = median(a);
    if (me == 0)
      std::printf("%10zu %6d %12.3f %12.3f %12.3f %10.2f %10.2f\n", bytes, n, dm, sm, am, 100.0 * (sm - dm) / dm,
                  100.0 * (am - dm) / dm);
  }
  MPI_Comm_free(&dup);
  rt::finalize();
  return 0;
}

int main(int argc, char** argv) { return chorus::bench::guarded_main("bench_rt_overhead", kUsage, argc, argv, run); }
