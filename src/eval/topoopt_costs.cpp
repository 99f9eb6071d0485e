#include "eval/topoopt_costs.h"

#include <map>

#include <fmt/format.h>

#include "core/error.h"
#include "core/plot_call.h"
#include "core/text_file.h"

namespace chorus::eval {

using topoopt::Fabric;

CostStudy run_cost_study(const std::vector<int>& servers) {
  CostStudy s;
  int pairs = 0;
  for (const auto& [d, b] : {std::pair{4, 100.0}, std::pair{8, 200.0}})
    for (int n : servers) {
      std::map<Fabric, double> usd;
      for (auto f : topoopt::all_fabrics()) {
        s.rows.push_back(topoopt::fabric_cost(f, n, d, b));
        usd[f] = s.rows.back().interconnect_usd;
      }
      s.ideal_over_oneshot_mean += usd[Fabric::kIdealFatTree] / usd[Fabric::kTopoOptOneShot];
      s.reconfig_over_oneshot_mean += usd[Fabric::kTopoOptReconfig] / usd[Fabric::kTopoOptOneShot];
      ++pairs;
    }
  if (pairs > 0) {
    s.ideal_over_oneshot_mean /= pairs;
    s.reconfig_over_oneshot_mean /= pairs;
  }
  return s;
}

std::vector<std::string> write_cost_outputs(const CostStudy& study, const std::string& dir) {
  OutputDir out(dir);
  std::string csv =
      "fabric,servers,degree,bandwidth_gbps,server_gbps,tiers,cost_usd,nic_usd,transceivers,switch_ports,"
      "patch_panel_ports,ocs_ports,one_by_two_switches,fibres\n";
  for (const auto& r : study.rows)
    csv +=
        fmt::format("{},{},{},{},{},{},{:.2f},{:.2f},{},{},{},{},{},{}\n", topoopt::to_string(r.fabric), r.servers,
                    r.degree, r.bandwidth_gbps, r.server_gbps, r.tiers, r.interconnect_usd, r.nic_usd, r.transceivers,
                    r.switch_ports, r.patch_panel_ports, r.ocs_ports, r.one_by_two_switches, r.fibres);
  out.write("cost.csv", csv);
  for (auto& f : draw_figures("topoopt", dir)) out.written().push_back(std::move(f));
  return out.written();
}

std::string format_cost_table(const CostStudy& study) {
  std::string out = "Fig. 11: interconnect cost, M$ (NICs apart; docs/topoopt.md \"Costs\")\n";
  int last_d = -1;
  for (const auto& r : study.rows) {
    if (r.degree != last_d) {
      out += fmt::format("\nd = {}, B = {} Gb/s\n{:<26}", r.degree, r.bandwidth_gbps, "fabric");
      for (const auto& q : study.rows)
        if (q.degree == r.degree && q.fabric == Fabric::kIdealFatTree) out += fmt::format(" {:>9}", q.servers);
      out += "\n";
      for (auto f : topoopt::all_fabrics()) {
        out += fmt::format("{:<26}", topoopt::to_string(f));
        for (const auto& q : study.rows)
          if (q.degree == r.degree && q.fabric == f) out += fmt::format(" {:>9.3f}", q.interconnect_usd / 1e6);
        out += "\n";
      }
      last_d = r.degree;
    }
  }
  out += fmt::format("\nideal Fat-tree / TopoOpt-oneshot: {:.2f}x on average (paper: 3.4x)\n",
                     study.ideal_over_oneshot_mean);
  out += fmt::format("TopoOpt-reconfig (OCS) / -oneshot (patch panels): {:.2f}x on average (paper: 1.33x)\n",
                     study.reconfig_over_oneshot_mean);
  out +=
      "How the costs are built, and where they differ from the paper: docs/topoopt.md, \"Costs (Sec. 5.2, Table 3, "
      "Fig. 11)\"\n";
  return out;
}

}  // namespace chorus::eval
