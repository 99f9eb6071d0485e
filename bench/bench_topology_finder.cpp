// TopologyFinder speed (issue 9's target: 1,000 servers at d = 8 in under 10 s). Two kinds of
// traffic per size: DLRM-like (one AllReduce group of all servers, 4 GB; an embedding table on
// every 16th server exchanging 32 MB with every other server both ways, as in Sec. 2.2), where
// the degree goes to rings, and model-parallel heavy (a small AllReduce; every server sends 1 GB
// to 8 random others, seed 7), where most degree goes to matching rounds.
//   bench_topology_finder [SERVERS...]   (default 16 128 1000), d = 8
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>

#include <fmt/format.h>

#include "bench/bench_args.h"
#include "topoopt/topology_finder.h"

using namespace chorus::topoopt;

namespace {

Traffic dlrm_like(int n) {
  Traffic t;
  t.servers = n;
  AllReduceGroup all;
  for (int s = 0; s < n; ++s) all.servers.push_back(s);
  all.bytes = 4e9;
  t.allreduce_groups.push_back(all);
  for (int e = 0; e < n; e += 16)
    for (int s = 0; s < n; ++s)
      if (s != e) {
        t.mp.push_back({e, s, 32e6});
        t.mp.push_back({s, e, 32e6});
      }
  return t;
}

Traffic mp_heavy(int n) {
  Traffic t;
  t.servers = n;
  AllReduceGroup all;
  for (int s = 0; s < n; ++s) all.servers.push_back(s);
  all.bytes = 1e8;
  t.allreduce_groups.push_back(all);
  std::mt19937 rng(7);
  for (int s = 0; s < n; ++s)
    for (int k = 0; k < 8; ++k) {
      const int d = (s + 1 + static_cast<int>(rng() % static_cast<unsigned>(n - 1))) % n;
      t.mp.push_back({s, d, 1e9});
    }
  return t;
}

void run(const std::string& name, const Traffic& traffic, int degree) {
  const auto a = std::chrono::steady_clock::now();
  const auto t = topology_finder(traffic.servers, degree, traffic);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  fmt::print("{:<10} {:>7} {:>3} {:>5}/{:<3} {:>8} {:>9} {:>8.3f} {:>10.1f} {:>9.1f}\n", name, traffic.servers, degree,
             t.degree_allreduce, t.degree_mp, t.edges.size(), traffic.mp.size(),
             t.mp_bytes > 0 ? t.mp_byte_hops / t.mp_bytes : 0.0, ms, static_cast<double>(ru.ru_maxrss) / 1024.0);
}

constexpr const char* kUsage =
    "Usage: bench_topology_finder [servers...]\n"
    "  TopologyFinder at d = 8 on a DLRM-like and an MP-heavy traffic per server count (default 16 128 1000):\n"
    "  degrees, links, hops per model-parallel byte, time and peak RSS.\n";

int run_all(chorus::bench::Args& args) {
  std::vector<int> sizes;
  while (!args.done()) sizes.push_back(chorus::bench::number<int>(args.positional(), "servers"));
  if (sizes.empty()) sizes = {16, 128, 1000};
  fmt::print("{:<10} {:>7} {:>3} {:>9} {:>8} {:>9} {:>8} {:>10} {:>9}\n", "traffic", "servers", "d", "d_AR/d_MP",
             "links", "mp", "hops/B", "time ms", "RSS MiB");
  for (int n : sizes) {
    run("dlrm-like", dlrm_like(n), 8);
    run("mp-heavy", mp_heavy(n), 8);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return chorus::bench::guarded_main("bench_topology_finder", kUsage, argc, argv, run_all);
}
