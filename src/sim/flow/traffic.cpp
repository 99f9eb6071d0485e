#include "sim/flow/traffic.h"

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "core/error.h"

namespace chorus::sim::flow {

int point_to_point(const net::Router& router, int src, int dst, double bytes, double start_ns, std::vector<Flow>& flows,
                   const FlowAfter& after) {
  Flow f;
  f.path = router.shortest_path(src, dst);
  f.bytes = bytes;
  f.start_ns = start_ns;
  f.after = after;
  f.src = src;
  f.dst = dst;
  flows.push_back(std::move(f));
  return static_cast<int>(flows.size()) - 1;
}

int barrier(double start_ns, std::vector<Flow>& flows, const std::vector<int>& after) {
  Flow join;
  join.start_ns = start_ns;
  join.after = after;
  flows.push_back(std::move(join));
  return static_cast<int>(flows.size()) - 1;
}

int ring_collective(const net::Router& router, const std::vector<int>& order, double bytes, int steps, double start_ns,
                    std::vector<Flow>& flows, const std::vector<int>& after) {
  const int n = static_cast<int>(order.size());
  if (n < 1) throw InputError("ring_collective", "the ring needs at least one server");
  int last = barrier(start_ns, flows, after);
  if (n == 1) return last;
  std::vector<net::Path> hop(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    hop[static_cast<std::size_t>(i)] =
        router.shortest_path(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>((i + 1) % n)]);
  const double chunk = bytes / n;
  std::vector<int> step_flows(static_cast<std::size_t>(n));
  for (int step = 0; step < steps; ++step) {
    for (int i = 0; i < n; ++i) {
      Flow f;
      f.path = hop[static_cast<std::size_t>(i)];
      f.bytes = chunk;
      f.start_ns = start_ns;
      f.after = {last};
      f.src = order[static_cast<std::size_t>(i)];
      f.dst = order[static_cast<std::size_t>((i + 1) % n)];
      flows.push_back(std::move(f));
      step_flows[static_cast<std::size_t>(i)] = static_cast<int>(flows.size()) - 1;
    }
    last = barrier(start_ns, flows, step_flows);
  }
  return last;
}

int ring_pipelined(const net::Router& router, const std::vector<int>& order, double bytes, int steps, double start_ns,
                   std::vector<Flow>& flows, const std::vector<int>& after) {
  const int n = static_cast<int>(order.size());
  if (n < 1) throw InputError("ring_pipelined", "the ring needs at least one server");
  const int first = barrier(start_ns, flows, after);
  if (n == 1 || steps < 1) return first;
  std::vector<net::Path> hop(static_cast<std::size_t>(n));
  std::vector<double> latency(static_cast<std::size_t>(n));
  double slowest = 0.0;
  for (int i = 0; i < n; ++i) {
    const auto iu = static_cast<std::size_t>(i);
    hop[iu] = router.shortest_path(order[iu], order[static_cast<std::size_t>((i + 1) % n)]);
    latency[iu] = net::path_latency_ns(router.network(), hop[iu]);
    slowest = std::max(slowest, latency[iu]);
  }
  std::vector<int> edges;
  for (int i = 0; i < n; ++i) {
    const auto iu = static_cast<std::size_t>(i);
    Flow f;
    f.path = std::move(hop[iu]);
    f.bytes = bytes / n * steps;
    f.start_ns = start_ns;
    f.after = {first};
    f.src = order[iu];
    f.dst = order[static_cast<std::size_t>((i + 1) % n)];
    f.delay_ns = steps * slowest - latency[iu];
    flows.push_back(std::move(f));
    edges.push_back(static_cast<int>(flows.size()) - 1);
  }
  return barrier(start_ns, flows, edges);
}

int ring_allreduce(const net::Router& router, const std::vector<int>& order, double bytes, double start_ns,
                   std::vector<Flow>& flows, const std::vector<int>& after) {
  const int n = static_cast<int>(order.size());
  return ring_collective(router, order, bytes, 2 * (n - 1), start_ns, flows, after);
}

int all_to_all(const net::Router& router, const std::vector<int>& members, double bytes, double start_ns,
               std::vector<Flow>& flows, const std::vector<int>& after) {
  const int n = static_cast<int>(members.size());
  if (n < 1) throw InputError("all_to_all", "the group needs at least one server");
  const int first = barrier(start_ns, flows, after);
  std::vector<int> sent;
  sent.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1));
  for (int src : members)
    for (int dst : members)
      if (src != dst) sent.push_back(point_to_point(router, src, dst, bytes / n, start_ns, flows, {first}));
  return sent.empty() ? first : barrier(start_ns, flows, sent);
}

// As the builders above append them: a barrier first; then per step n flows and a barrier
// (stepped), or n flows and a barrier (pipelined), or n(n - 1) flows and a barrier (all-to-all);
// a ring of one server, or of no steps, is its first barrier alone.
std::size_t ring_collective_flows(std::size_t n, std::size_t steps) { return n < 2 ? 1 : 1 + steps * (n + 1); }
std::size_t ring_pipelined_flows(std::size_t n, std::size_t steps) { return n < 2 || steps < 1 ? 1 : n + 2; }
std::size_t all_to_all_flows(std::size_t n) { return n < 2 ? 1 : n * (n - 1) + 2; }

std::vector<std::vector<double>> traffic_matrix(int servers, const std::vector<Flow>& flows) {
  std::vector<std::vector<double>> m(static_cast<std::size_t>(servers),
                                     std::vector<double>(static_cast<std::size_t>(servers), 0.0));
  for (const auto& f : flows)
    if (f.src >= 0 && f.dst >= 0 && f.src < servers && f.dst < servers)
      m[static_cast<std::size_t>(f.src)][static_cast<std::size_t>(f.dst)] += f.bytes;
  return m;
}

void write_matrix_csv(std::ostream& out, const std::vector<std::vector<double>>& matrix) {
  out << "src";
  for (std::size_t j = 0; j < matrix.size(); ++j) out << ',' << j;
  out << '\n';
  for (std::size_t i = 0; i < matrix.size(); ++i) {
    out << i;
    for (double v : matrix[i]) out << ',' << fmt::format("{}", v);
    out << '\n';
  }
}

}  // namespace chorus::sim::flow
