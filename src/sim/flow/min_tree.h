#pragma once
// A dense array of doubles with its minimum kept in a complete binary tree over it: a point update
// costs O(log n), re-deriving the whole tree after many updates O(n) (sequential), and listing the
// positions whose value is at most a bound O(k log n) for k of them. The flow engine keeps its
// sending flows' last-byte times here, by position: one rate change moves one leaf, a re-fill of
// most flows rebuilds the tree in one pass.
#include <cstddef>
#include <limits>
#include <vector>

namespace chorus::sim::flow {

class MinTree {
 public:
  static constexpr double kNone = std::numeric_limits<double>::infinity();

  std::size_t size() const { return n_; }
  double min() const { return node_.empty() ? kNone : node_[1]; }
  double at(std::size_t i) const { return node_[cap_ + i]; }

  void push_back(double v) {
    if (n_ == cap_) grow();
    node_[cap_ + n_] = v;
    lift(cap_ + n_++);
  }
  void pop_back() {
    --n_;
    node_[cap_ + n_] = kNone;
    lift(cap_ + n_);
  }
  void set(std::size_t i, double v) {
    node_[cap_ + i] = v;
    lift(cap_ + i);
  }
  // Changes a value without updating the tree; rebuild() before the next query.
  void set_leaf(std::size_t i, double v) { node_[cap_ + i] = v; }
  void rebuild() {
    for (std::size_t k = cap_; k-- > 1;) node_[k] = std::min(node_[2 * k], node_[2 * k + 1]);
  }

  // Appends to `out` every position whose value is <= bound, in increasing position.
  void at_most(double bound, std::vector<std::size_t>& out) const {
    if (node_.empty()) return;
    visit(1, bound, out);
  }

 private:
  void lift(std::size_t k) {
    for (k /= 2; k >= 1; k /= 2) {
      const double m = std::min(node_[2 * k], node_[2 * k + 1]);
      if (node_[k] == m) break;
      node_[k] = m;
    }
  }
  void grow() {
    const std::size_t cap = cap_ == 0 ? 64 : 2 * cap_;
    std::vector<double> node(2 * cap, kNone);
    for (std::size_t i = 0; i < n_; ++i) node[cap + i] = node_[cap_ + i];
    node_ = std::move(node);
    cap_ = cap;
    rebuild();
  }
  void visit(std::size_t k, double bound, std::vector<std::size_t>& out) const {
    if (node_[k] > bound) return;
    if (k >= cap_) {
      out.push_back(k - cap_);
      return;
    }
    visit(2 * k, bound, out);
    visit(2 * k + 1, bound, out);
  }

  std::vector<double> node_;  // node_[1] the root; leaves at cap_ .. 2 cap_ - 1
  std::size_t cap_ = 0, n_ = 0;
};

}  // namespace chorus::sim::flow
