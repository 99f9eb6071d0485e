#pragma once
// The discrete-event core every chorus simulation runs on: a time-ordered queue of small
// value events. Ties in time are broken by insertion order, so runs are deterministic.
// Deliberately tiny (in the spirit of htsim's event list): a binary heap of PODs, no
// virtual dispatch, no allocation per event beyond the heap's growth.
#include <cstdint>
#include <queue>
#include <vector>

namespace chorus::sim {

template <typename Payload>
class EventQueue {
 public:
  struct Event {
    double time_ns;
    std::uint64_t seq;
    Payload payload;
  };

  void schedule_at(double time_ns, const Payload& payload) { heap_.push(Event{time_ns, next_seq_++, payload}); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  double now_ns() const { return now_ns_; }
  // Time of the earliest event; only valid when !empty().
  double next_time_ns() const { return heap_.top().time_ns; }

  // Removes and returns the earliest event, advancing the clock to it.
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    now_ns_ = e.time_ns;
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_seq_ = 0;
  double now_ns_ = 0;
};

}  // namespace chorus::sim
