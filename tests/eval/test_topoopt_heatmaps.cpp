// TopoOpt Figs. 4 and 9 (eval/topoopt_heatmaps.h): the DLRM example's traffic matrices, cells
// worked out by hand from Sec. 2.2 (one 4 GB AllReduce over 16 servers; E0..E3 on S0, S3, S8,
// S13 exchanging 32 MB with every other server each way).
#include <gtest/gtest.h>

#include <algorithm>

#include "eval/topoopt_heatmaps.h"

namespace chorus::eval {
namespace {

double total(const Heatmap& h) {
  double sum = 0;
  for (const auto& row : h.bytes)
    for (double b : row) sum += b;
  return sum;
}

double largest(const Heatmap& h) {
  double top = 0;
  for (const auto& row : h.bytes) top = std::max(top, *std::max_element(row.begin(), row.end()));
  return top;
}

TEST(TopoOptHeatmaps, DlrmExampleByHand) {
  const auto maps = run_heatmaps();
  ASSERT_EQ(maps.size(), 4u);
  EXPECT_EQ(maps[0].label, "p = 1");  // TotientPerms(16) = 1, 3, 5, 7, ...
  EXPECT_EQ(maps[1].label, "p = 3");
  EXPECT_EQ(maps[2].label, "p = 5");
  EXPECT_EQ(maps[3].figure, "fig9");
  const double ring = 2.0 * 15 / 16 * 4e9;  // a ring all-reduce: 2 (n - 1) / n of the buffer to the successor
  const double mp = 32e6;
  const auto& p1 = maps[0].bytes;
  EXPECT_DOUBLE_EQ(p1[1][2], ring);       // ring edge, no table on either server
  EXPECT_DOUBLE_EQ(p1[0][1], ring + mp);  // ring edge, and E0's embeddings to S1
  EXPECT_DOUBLE_EQ(p1[5][0], mp);         // S5's gradients to E0, no ring edge
  EXPECT_DOUBLE_EQ(p1[1][4], 0.0);
  const auto& p3 = maps[1].bytes;
  EXPECT_DOUBLE_EQ(p3[1][4], ring);  // p = 3: S1 -> S4
  EXPECT_DOUBLE_EQ(p3[1][2], 0.0);
  // 13 + 3 = 0 (mod 16); both servers hold a table: E3's embeddings to S0 and S13's gradients to E0.
  EXPECT_DOUBLE_EQ(p3[13][0], ring + 2 * mp);
  // Every map carries the same bytes: 16 ring shares, and 4 tables x 15 servers x 2 directions.
  const double all = 16 * ring + 4 * 15 * 2 * mp;
  for (const auto& h : maps) EXPECT_DOUBLE_EQ(total(h), all) << h.label;
  // TopoOpt shares the AllReduce over several rings: no cell as large as a single ring's.
  EXPECT_LT(largest(maps[3]), ring);
}

}  // namespace
}  // namespace chorus::eval
