#pragma once
// The Ideal reference of Themis Table 3 inside a training DAG: a collective over a set of
// dimensions uses 100 % of their bandwidth, i.e. it takes its minimum bytes per NPU
// (sched/ideal.h, with P = the NPUs it spans) over the sum of those dimensions' bandwidth,
// no fixed delays. A collective holds its dimensions while it runs. Among collectives that
// share a dimension the one with the least remaining time runs first and may preempt a
// longer one (shortest remaining time first, ties by issue order): the smallest-first idea
// of SCF taken to its limit, so that an ideal network never loses to a real schedule merely
// by its order. Collectives on disjoint dimensions run at the same time.
#include <vector>

#include "net/network.h"
#include "sim/network_model.h"

namespace chorus::sim {

class IdealNetwork : public NetworkModel {
 public:
  explicit IdealNetwork(const net::Network& network);

  void start(int id, const workload::Node& comm, double now_ns) override;
  bool idle() const override { return active_.empty(); }
  double next_event_ns() const override;
  void step(std::vector<int>& finished) override;
  double bytes_sent_per_npu() const override { return bytes_; }

  static double ideal_time_ns(const net::Network& network, const workload::Node& comm);
  static double ideal_bytes_per_npu(const net::Network& network, const workload::Node& comm);

 private:
  struct Active {
    int id;
    const workload::Node* comm;
    double remaining_ns;  // at full bandwidth of its dimensions
    bool running;
  };
  void advance_to(double now_ns);
  void assign();

  const net::Network& network_;
  std::vector<Active> active_;  // in issue order
  double now_ns_ = 0;
  double bytes_ = 0;
};

}  // namespace chorus::sim
