// Flow-level model speed (issue 9): ring all-reduce over all servers plus random point-to-point
// flows on an expander of degree 8 (100 Gbps links, seed 1). Prints flows, reallocations, wall
// time and peak RSS. Usage: bench_flow_model [servers...] (default 128 1024).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/rng.h"
#include "net/graph/fabrics.h"
#include "sim/flow/flow_model.h"
#include "sim/flow/traffic.h"

using namespace chorus;

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {128, 1024};
  std::printf("servers,flows,p2p_flows,reallocations,events,makespan_ms,wall_s,peak_rss_mb\n");
  for (int n : sizes) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto g = net::expander(n, 8, 100.0, 1);
    net::Router router(g);
    std::vector<sim::flow::Flow> flows;
    std::vector<int> order(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
    sim::flow::ring_allreduce(router, order, 100e6, 0.0, flows);  // 100 MB gradient
    Rng rng(2);
    const int p2p = 4 * n;  // 4 random 1 MB transfers per server over the first 1 ms
    for (int k = 0; k < p2p; ++k) {
      const int s = static_cast<int>(rng.uniform_int(0, n - 1));
      int d = static_cast<int>(rng.uniform_int(0, n - 2));
      if (d >= s) ++d;
      sim::flow::point_to_point(router, s, d, 1e6, rng.uniform(0.0, 1e6), flows);
    }
    const auto r = sim::flow::simulate_flows(g, flows);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::printf("%d,%zu,%d,%lld,%lld,%.3f,%.2f,%.1f\n", n, flows.size(), p2p, static_cast<long long>(r.reallocations),
                static_cast<long long>(r.events), r.makespan_ns / 1e6, wall, static_cast<double>(ru.ru_maxrss) / 1024.0);
    std::fflush(stdout);
  }
  return 0;
}
