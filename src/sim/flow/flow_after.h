#pragma once
// A flow's `after` list: the earlier flows it waits for. Most flows wait for one (the barrier
// before a collective's flows), kept inline; a barrier waits for many, kept in one array of their
// own. 16 bytes where a std::vector took 24 and an allocation for the one: 2.3 million flows in one
// DLRM iteration at 1,024 servers (docs/topoopt.md, "Scope and speed").
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

namespace chorus::sim::flow {

class FlowAfter {
 public:
  FlowAfter() = default;
  FlowAfter(std::initializer_list<int> flows) { assign(flows.begin(), flows.size()); }
  FlowAfter(const std::vector<int>& flows) { assign(flows.data(), flows.size()); }
  FlowAfter(const FlowAfter& o) { assign(o.begin(), o.size()); }
  FlowAfter(FlowAfter&& o) noexcept = default;
  FlowAfter& operator=(const FlowAfter& o) {
    if (this != &o) assign(o.begin(), o.size());
    return *this;
  }
  FlowAfter& operator=(FlowAfter&& o) noexcept = default;
  ~FlowAfter() = default;

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int* begin() const { return size_ <= 1 ? &one_ : many_.get(); }
  const int* end() const { return begin() + size_; }

 private:
  void assign(const int* flows, std::size_t n) {
    size_ = static_cast<std::uint32_t>(n);
    many_.reset();
    if (n == 1) one_ = flows[0];
    if (n > 1) {
      many_ = std::make_unique<int[]>(n);
      std::copy(flows, flows + n, many_.get());
    }
  }

  std::uint32_t size_ = 0;
  int one_ = 0;                  // the one flow, when size_ == 1
  std::unique_ptr<int[]> many_;  // when size_ > 1
};

}  // namespace chorus::sim::flow
