// Simulator speed and memory (see BENCHMARKS-history.md for how to run and the recorded numbers).
//   bench_sim            1 GB all-reduce, 64 chunks, each Table 2 preset x scheduler;
//                        scaling in NPUs, dimensions and chunks; the whole Themis study.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

#include "eval/themis_microbench.h"
#include "net/presets.h"
#include "sim/run_collective.h"

using namespace chorus;

namespace {

// Median wall time of `reps` runs of f, in microseconds.
template <typename F>
double time_us(F&& f, int reps) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double simulate_us(const net::Network& n, int chunks, const std::string& scheduler, int reps, double* util = nullptr) {
  const auto req = sim::make_request(CollectiveKind::kAllReduce, 1e9, chunks, scheduler);
  return time_us(
      [&] {
        const auto r = sim::run_collective(n, req);
        if (util) *util = r.result.avg_bw_utilization;
      },
      reps);
}

net::Network uniform(int dims, int size) {
  net::Network n{fmt::format("{}^{}", size, dims), {}};
  for (int k = 0; k < dims; ++k) n.dims.push_back({net::DimKind::kSwitch, size, 400.0 * (k + 1), 2, 500});
  return n;
}

}  // namespace

int main() {
  fmt::print("# 1 GB all-reduce, 64 chunks, median of 21 runs (wall us)\n");
  fmt::print("{:<22} {:>10} {:>12} {:>12} {:>10}\n", "topology", "baseline", "themis-fifo", "themis-scf", "ideal");
  for (const auto& n : net::table2_presets()) {
    fmt::print("{:<22} {:>10.1f} {:>12.1f} {:>12.1f} {:>10.1f}\n", n.name, simulate_us(n, 64, "baseline", 21),
               simulate_us(n, 64, "themis-fifo", 21), simulate_us(n, 64, "themis-scf", 21),
               simulate_us(n, 64, "ideal", 21));
  }
  fmt::print("\n# scaling, themis-scf, 1 GB all-reduce (wall us)\n");
  fmt::print("{:<14} {:>12} {:>6} {:>7} {:>10} {:>10}\n", "network", "NPUs", "dims", "chunks", "time_us", "us/stage");
  struct Case {
    int dims, size, chunks;
  };
  for (const Case c : {Case{2, 32, 64}, Case{4, 16, 64}, Case{5, 16, 64}, Case{6, 16, 64}, Case{5, 16, 512},
                       Case{5, 16, 4096}, Case{6, 16, 4096}}) {
    const auto n = uniform(c.dims, c.size);
    double util = 0;
    const double us = simulate_us(n, c.chunks, "themis-scf", 5, &util);
    fmt::print("{:<14} {:>12} {:>6} {:>7} {:>10.1f} {:>10.3f}\n", n.name, n.num_npus(), c.dims, c.chunks, us,
               us / (2.0 * c.dims * c.chunks));
  }
  const double study_us = time_us([] { eval::run_themis_microbench(eval::MicrobenchConfig::paper_defaults()); }, 5);
  fmt::print("\n# whole `reproduce themis` study (164 simulations, no file output): {:.1f} ms\n", study_us / 1e3);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  fmt::print("# peak resident memory of this process: {:.1f} MiB\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
  return 0;
}
