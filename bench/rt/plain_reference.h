#pragma once
// What the plain reference programs share (bench_gloo_plain, bench_mpi_plain): their size lists
// and their rows, in the same columns as each other. No chorus code: each reference links only
// its own library.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace plain_reference {

// "8,64,,4096" -> {"8", "64", "4096"}.
inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= s.size()) {
    const std::size_t comma = std::min(s.find(',', at), s.size());
    if (comma > at) out.push_back(s.substr(at, comma - at));
    at = comma + 1;
  }
  return out;
}

// `warmup` calls of `once`, `barrier`, then `iters` timed calls: each one's time in us.
template <typename Once, typename Barrier>
std::vector<double> time_iterations(int iters, int warmup, Once&& once, Barrier&& barrier) {
  for (int i = 0; i < warmup; ++i) once();
  barrier();
  std::vector<double> t(static_cast<std::size_t>(iters));
  for (auto& x : t) {
    const auto t0 = std::chrono::steady_clock::now();
    once();
    x = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }
  return t;
}

inline void print_header() {
  std::printf("%-10s %12s %6s %12s %12s %12s %12s %12s\n", "impl", "bytes", "ranks", "min_us", "mean_us", "max_us",
              "algbw_GBps", "busbw_GBps");
}

// One row from the iterations' times (us, each already the slowest rank's): min / mean / max,
// and nccl-tests' algorithm and bus bandwidth of an all-reduce of `bytes` on `ranks` ranks.
inline void print_row(const std::string& impl, std::size_t bytes, int ranks, const std::vector<double>& t) {
  const double lo = *std::min_element(t.begin(), t.end()), hi = *std::max_element(t.begin(), t.end());
  double sum = 0;
  for (double x : t) sum += x;
  const double mean = sum / static_cast<double>(t.size());
  const double algbw = static_cast<double>(bytes) / (mean * 1e3);
  const double busbw = algbw * 2.0 * (ranks - 1) / ranks;
  std::printf("%-10s %12zu %6d %12.2f %12.2f %12.2f %12.3f %12.3f\n", impl.c_str(), bytes, ranks, lo, mean, hi, algbw,
              busbw);
}

}  // namespace plain_reference
