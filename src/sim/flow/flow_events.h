#pragma once
// The flow engine's event queue: (time, kind, flow) tuples popped smallest first. No two events
// are equal (a flow has one start and one completion), so the order is total and any structure
// that pops the smallest gives the same sequence. A barrier that completes releases its
// collective's flows at one time in increasing index: hundreds of thousands of starts pushed in
// order, which a heap then pops in O(log n) misses each. Here an event no smaller than the last
// one queued in order goes to a FIFO instead, the others to a heap, and a pop takes the smaller of
// the two fronts.
#include <cstddef>
#include <functional>
#include <queue>
#include <tuple>
#include <vector>

namespace chorus::sim::flow {

class FlowEvents {
 public:
  using Event = std::tuple<double, int, int>;  // time, kind, flow

  bool empty() const { return heap_.empty() && head_ == fifo_.size(); }
  // The smallest event; only when !empty().
  const Event& top() const {
    if (head_ == fifo_.size()) return heap_.top();
    if (heap_.empty() || fifo_[head_] < heap_.top()) return fifo_[head_];
    return heap_.top();
  }
  void pop() {
    if (head_ != fifo_.size() && (heap_.empty() || fifo_[head_] < heap_.top())) {
      if (++head_ == fifo_.size()) {  // drained: start over at the front
        fifo_.clear();
        head_ = 0;
      } else if (head_ >= kCompactAt && 2 * head_ >= fifo_.size()) {  // popped half: drop them
        fifo_.erase(fifo_.begin(), fifo_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
      }
      return;
    }
    heap_.pop();
  }
  void emplace(double time, int kind, int flow) {
    const Event e{time, kind, flow};
    if (head_ == fifo_.size() || fifo_.back() < e)
      fifo_.push_back(e);
    else
      heap_.push(e);
  }

 private:
  static constexpr std::size_t kCompactAt = 4096;
  std::vector<Event> fifo_;  // increasing, from head_
  std::size_t head_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> heap_;
};

}  // namespace chorus::sim::flow
