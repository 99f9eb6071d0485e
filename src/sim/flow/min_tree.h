#pragma once
// A dense array of doubles with its minimum kept in a tree of eight children a node over it: a
// point update costs O(log8 n), re-deriving the whole tree after many updates O(n) (sequential),
// and listing the positions whose value is at most a bound O(k log8 n) for k of them. The flow
// engine keeps its sending flows' last-byte times here, by position: one rate change moves one
// leaf, a re-fill of most flows rebuilds the tree in one pass. Eight children fill one cache line,
// so a walk from the root to a leaf reads a third of the lines a binary tree's would.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace chorus::sim::flow {

class MinTree {
 public:
  static constexpr double kNone = std::numeric_limits<double>::infinity();

  std::size_t size() const { return n_; }
  double min() const { return level_.empty() ? kNone : level_.back()[0]; }
  double at(std::size_t i) const { return level_[0][i]; }

  void push_back(double v) {
    if (level_.empty() || n_ == level_[0].size()) grow();
    level_[0][n_] = v;
    lift(n_++);
  }
  void pop_back() {
    --n_;
    level_[0][n_] = kNone;
    lift(n_);
  }
  void set(std::size_t i, double v) {
    level_[0][i] = v;
    lift(i);
  }
  // Changes a value without updating the tree; rebuild() before the next query.
  void set_leaf(std::size_t i, double v) { level_[0][i] = v; }
  // Only the nodes over the first size() leaves: the others cover leaves that hold kNone (never
  // set, or popped), and so do they.
  void rebuild() { rebuild_over(n_); }

  // Appends to `out` every position whose value is <= bound, in increasing position.
  void at_most(double bound, std::vector<std::size_t>& out) const {
    if (level_.empty() || level_.back()[0] > bound) return;
    visit(level_.size() - 1, 0, bound, out);
  }

 private:
  static constexpr std::size_t kFan = 8;
  double least(std::size_t h, std::size_t k) const {  // the smallest child of node k of level h + 1
    const double* c = level_[h].data() + kFan * k;
    const double a = std::min(std::min(c[0], c[1]), std::min(c[2], c[3]));
    const double b = std::min(std::min(c[4], c[5]), std::min(c[6], c[7]));
    return std::min(a, b);
  }
  void rebuild_over(std::size_t leaves) {
    std::size_t below = leaves;  // the nodes of the level below to cover
    for (std::size_t h = 1; h < level_.size(); ++h) {
      below = std::max<std::size_t>(1, (below + kFan - 1) / kFan);
      for (std::size_t k = 0; k < below; ++k) level_[h][k] = least(h - 1, k);
    }
  }
  void lift(std::size_t i) {
    for (std::size_t h = 1; h < level_.size(); ++h) {
      i /= kFan;
      const double m = least(h - 1, i);
      if (level_[h][i] == m) break;
      level_[h][i] = m;
    }
  }
  // Leaves for `cap` values (a multiple of eight), then per level one node per eight below (each
  // level padded to a multiple of eight with kNone), up to a single root.
  void grow() {
    const std::size_t cap = level_.empty() ? 64 : 2 * level_[0].size();
    std::vector<std::vector<double>> level;
    level.emplace_back(cap, kNone);
    if (!level_.empty())
      std::copy(level_[0].begin(), level_[0].begin() + static_cast<std::ptrdiff_t>(n_), level[0].begin());
    for (std::size_t nodes = cap; nodes > 1;) {
      nodes = (nodes + kFan - 1) / kFan;
      level.emplace_back(nodes == 1 ? 1 : (nodes + kFan - 1) / kFan * kFan, kNone);
    }
    level_ = std::move(level);
    rebuild_over(cap);
  }
  // Node k of level h is at most the bound: descends only into its children that are too.
  void visit(std::size_t h, std::size_t k, double bound, std::vector<std::size_t>& out) const {
    const double* c = level_[h - 1].data() + kFan * k;
    for (std::size_t j = 0; j < kFan; ++j) {
      if (c[j] > bound) continue;
      if (h == 1)
        out.push_back(kFan * k + j);
      else
        visit(h - 1, kFan * k + j, bound, out);
    }
  }

  std::vector<std::vector<double>> level_;  // level_[0] the values, level_.back()[0] the root
  std::size_t n_ = 0;
};

}  // namespace chorus::sim::flow
