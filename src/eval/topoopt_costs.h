#pragma once
// TopoOpt Sec. 5.2, Fig. 11: what each fabric costs as the cluster grows, for (d = 4, B = 100 Gb/s)
// and (d = 8, B = 200 Gb/s), from the cost model of topoopt/cost_model.h. Part of
// `chorus reproduce topoopt`.
#include <string>
#include <vector>

#include "topoopt/cost_model.h"

namespace chorus::eval {

struct CostStudy {
  std::vector<topoopt::FabricCost> rows;  // (d, B) x servers x fabric
  // Fig. 11's headline: ideal Fat-tree / TopoOpt-oneshot interconnect cost, mean over the rows;
  // and TopoOpt-reconfig (OCS) / -oneshot (patch panels).
  double ideal_over_oneshot_mean = 0;
  double reconfig_over_oneshot_mean = 0;
};

CostStudy run_cost_study(const std::vector<int>& servers = {128, 432, 1024, 2000});

// DIR/cost.csv (fabric,servers,degree,bandwidth_gbps,server_gbps,tiers,cost_usd,nic_usd, and the
// part counts) and, through chorus.plot, DIR/fig11_cost.svg. Returns the paths written.
std::vector<std::string> write_cost_outputs(const CostStudy& study, const std::string& dir);
std::string format_cost_table(const CostStudy& study);

}  // namespace chorus::eval
