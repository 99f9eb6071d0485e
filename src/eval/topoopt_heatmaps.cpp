#include "eval/topoopt_heatmaps.h"

#include <fmt/format.h>

#include "core/plot_call.h"
#include "core/text_file.h"
#include "topoopt/topology_finder.h"
#include "topoopt/totient_perms.h"
#include "topoopt/traffic.h"

namespace chorus::eval {
namespace {

using Matrix = std::vector<std::vector<double>>;

// The MP transfers of `traffic` at their endpoints.
Matrix mp_matrix(const topoopt::Traffic& traffic) {
  const auto n = static_cast<std::size_t>(traffic.servers);
  Matrix m(n, std::vector<double>(n, 0.0));
  for (const auto& t : traffic.mp) m[static_cast<std::size_t>(t.src)][static_cast<std::size_t>(t.dst)] += t.bytes;
  return m;
}

// A ring all-reduce of `bytes` per server on the given ring orders (the bytes split equally):
// every server sends 2 (k - 1) / k of its share to its successor on each ring.
void add_rings(Matrix& m, const std::vector<std::vector<int>>& orders, double bytes) {
  for (const auto& order : orders) {
    const auto k = order.size();
    const double sent = topoopt::allreduce_wire_bytes({order, bytes}) / static_cast<double>(k * orders.size());
    for (std::size_t j = 0; j < k; ++j)
      m[static_cast<std::size_t>(order[j])][static_cast<std::size_t>(order[(j + 1) % k])] += sent;
  }
}

}  // namespace

std::vector<Heatmap> run_heatmaps() {
  const auto traffic = topoopt::dlrm_example();
  std::vector<Heatmap> maps;
  const auto& group = traffic.allreduce_groups.at(0);
  const auto generators = topoopt::totient_generators(static_cast<int>(group.servers.size()));
  for (std::size_t i = 0; i < 3 && i < generators.size(); ++i) {
    Heatmap h{"fig4", fmt::format("p = {}", generators[i]), mp_matrix(traffic)};
    add_rings(h.bytes, {topoopt::ring_order(group.servers, generators[i])}, group.bytes);
    maps.push_back(std::move(h));
  }
  const int degree = 6;  // Sec. 3.3's example
  const auto topology = topoopt::topology_finder(traffic.servers, degree, traffic);
  Heatmap h{"fig9", fmt::format("TopoOpt d = {}", degree), mp_matrix(traffic)};
  for (const auto& g : topology.allreduce) {
    if (g.group < 0) continue;  // the connectivity ring carries no all-reduce
    std::vector<std::vector<int>> orders;
    for (int p : g.generators) orders.push_back(topoopt::ring_order(g.servers, p));
    add_rings(h.bytes, orders, traffic.allreduce_groups.at(static_cast<std::size_t>(g.group)).bytes);
  }
  maps.push_back(std::move(h));
  return maps;
}

std::vector<std::string> write_heatmap_outputs(const std::vector<Heatmap>& maps, const std::string& dir) {
  OutputDir out(dir);
  std::string csv = "figure,label,src,dst,bytes\n";
  for (const auto& h : maps)
    for (std::size_t s = 0; s < h.bytes.size(); ++s)
      for (std::size_t d = 0; d < h.bytes[s].size(); ++d)
        if (h.bytes[s][d] > 0) csv += fmt::format("{},{},{},{},{:.0f}\n", h.figure, h.label, s, d, h.bytes[s][d]);
  out.write("heatmaps.csv", csv);
  for (auto& f : draw_figures("topoopt-heatmaps", dir)) out.written().push_back(std::move(f));
  return out.written();
}

}  // namespace chorus::eval
