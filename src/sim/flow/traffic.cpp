#include "sim/flow/traffic.h"

#include <ostream>

#include <fmt/format.h>

#include "core/error.h"

namespace chorus::sim::flow {

int point_to_point(const net::Router& router, int src, int dst, double bytes, double start_ns, std::vector<Flow>& flows,
                   const std::vector<int>& after) {
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

int ring_allreduce(const net::Router& router, const std::vector<int>& order, double bytes, double start_ns,
                   std::vector<Flow>& flows, const std::vector<int>& after) {
  const int n = static_cast<int>(order.size());
  if (n < 1) throw InputError("ring_allreduce", "the ring needs at least one server");
  Flow barrier;
  barrier.start_ns = start_ns;
  barrier.after = after;
  flows.push_back(barrier);
  int last = static_cast<int>(flows.size()) - 1;
  if (n == 1) return last;
  std::vector<net::Path> hop(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) hop[static_cast<std::size_t>(i)] = router.shortest_path(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>((i + 1) % n)]);
  const double chunk = bytes / n;
  for (int step = 0; step < 2 * (n - 1); ++step) {
    Flow join;
    join.start_ns = start_ns;
    for (int i = 0; i < n; ++i) {
      Flow f;
      f.path = hop[static_cast<std::size_t>(i)];
      f.bytes = chunk;
      f.start_ns = start_ns;
      f.after = {last};
      f.src = order[static_cast<std::size_t>(i)];
      f.dst = order[static_cast<std::size_t>((i + 1) % n)];
      flows.push_back(std::move(f));
      join.after.push_back(static_cast<int>(flows.size()) - 1);
    }
    flows.push_back(std::move(join));
    last = static_cast<int>(flows.size()) - 1;
  }
  return last;
}

std::vector<std::vector<double>> traffic_matrix(int servers, const std::vector<Flow>& flows) {
  std::vector<std::vector<double>> m(static_cast<std::size_t>(servers), std::vector<double>(static_cast<std::size_t>(servers), 0.0));
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
