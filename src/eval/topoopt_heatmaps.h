#pragma once
// TopoOpt Sec. 2.2 and 3.3, Figs. 4 and 9: the server-to-server traffic of the DLRM example
// (16 servers, embedding tables E0..E3 on S0, S3, S8, S13, one 4 GB AllReduce of the rest;
// topoopt/traffic.h dlrm_example). Fig. 4: the AllReduce on one ring permutation (the first three
// of TotientPerms(16): p = 1, 3, 5; the paper's Fig. 5 draws three permutations without naming
// them) plus the MP transfers, which stay where they are; Fig. 9: on TopoOpt's topology for d = 6,
// where the AllReduce is shared by its rings. A cell is the bytes a source sends to a destination
// in one iteration (transfer endpoints, not the links they cross): a ring all-reduce sends
// 2 (n - 1) / n of the buffer to the next server of each ring, split equally over the rings. Part
// of `chorus reproduce topoopt`.
#include <string>
#include <vector>

namespace chorus::eval {

struct Heatmap {
  std::string figure;                      // "fig4" or "fig9"
  std::string label;                       // "p = 1", ..., "TopoOpt d = 6"
  std::vector<std::vector<double>> bytes;  // [src][dst]
};

std::vector<Heatmap> run_heatmaps();

// DIR/heatmaps.csv (figure,label,src,dst,bytes; cells with bytes > 0) and, through chorus.plot,
// DIR/fig4_heatmaps.svg and DIR/fig9_heatmap.svg. Returns the paths written.
std::vector<std::string> write_heatmap_outputs(const std::vector<Heatmap>& maps, const std::string& dir);

}  // namespace chorus::eval
