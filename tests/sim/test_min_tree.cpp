// MinTree (src/sim/flow/min_tree.h) against a plain array searched by brute force: the minimum,
// the positions at most a bound (in increasing order), after pushes, pops, point updates and
// leaf updates followed by a rebuild, across the sizes where the tree grows a level.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <vector>

#include "sim/flow/min_tree.h"

namespace {

using chorus::sim::flow::MinTree;

void expect_same(const MinTree& tree, const std::vector<double>& plain, double bound) {
  ASSERT_EQ(tree.size(), plain.size());
  const double least = plain.empty() ? MinTree::kNone : *std::min_element(plain.begin(), plain.end());
  EXPECT_EQ(tree.min(), least);
  std::vector<std::size_t> want;
  for (std::size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(tree.at(i), plain[i]);
    if (plain[i] <= bound) want.push_back(i);
  }
  std::vector<std::size_t> got;
  tree.at_most(bound, got);
  EXPECT_EQ(got, want);
}

TEST(MinTree, EmptyHasNoMinimumAndListsNothing) {
  MinTree tree;
  EXPECT_EQ(tree.min(), MinTree::kNone);
  std::vector<std::size_t> got;
  tree.at_most(1e300, got);
  EXPECT_TRUE(got.empty());
}

TEST(MinTree, SmallHandWorkedCase) {
  MinTree tree;
  for (double v : {5.0, 3.0, 9.0, 3.0}) tree.push_back(v);
  EXPECT_EQ(tree.min(), 3.0);
  std::vector<std::size_t> got;
  tree.at_most(3.0, got);
  EXPECT_EQ(got, (std::vector<std::size_t>{1, 3}));
  tree.set(1, 10.0);
  tree.set(3, MinTree::kNone);  // a flow without a rate
  EXPECT_EQ(tree.min(), 5.0);
  tree.pop_back();
  tree.pop_back();
  tree.pop_back();
  EXPECT_EQ(tree.min(), 5.0);
  tree.pop_back();
  EXPECT_EQ(tree.min(), MinTree::kNone);
}

TEST(MinTree, MatchesBruteForceThroughGrowthAndRebuilds) {
  std::mt19937 rng(12345);
  std::uniform_real_distribution<double> value(0.0, 100.0);
  MinTree tree;
  std::vector<double> plain;
  // Up to 5,000 values: the leaves grow from 64 to 8,192 (levels of 8, 64, 512 and 4,096 nodes).
  for (int round = 0; round < 4000; ++round) {
    const int op = static_cast<int>(rng() % 10);
    if (op < 5 || plain.empty()) {
      const double v = rng() % 7 == 0 ? MinTree::kNone : value(rng);
      tree.push_back(v);
      plain.push_back(v);
    } else if (op < 6) {
      tree.pop_back();
      plain.pop_back();
    } else if (op < 9) {
      const std::size_t i = rng() % plain.size();
      const double v = value(rng);
      tree.set(i, v);
      plain[i] = v;
    } else {  // many leaves at once, then one rebuild
      for (int k = 0; k < 50; ++k) {
        const std::size_t i = rng() % plain.size();
        const double v = value(rng);
        tree.set_leaf(i, v);
        plain[i] = v;
      }
      tree.rebuild();
    }
    if (round % 97 == 0) expect_same(tree, plain, value(rng));
  }
  expect_same(tree, plain, 50.0);
  while (!plain.empty()) {  // emptied again
    tree.pop_back();
    plain.pop_back();
    if (plain.size() % 211 == 0) expect_same(tree, plain, 30.0);
  }
  EXPECT_EQ(tree.min(), MinTree::kNone);
}

}  // namespace
