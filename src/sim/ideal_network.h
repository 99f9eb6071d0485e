#pragma once
// The Ideal reference of Themis Table 3 inside a training DAG: a collective over a set of
// dimensions uses 100 % of their bandwidth, i.e. it takes its minimum bytes per NPU
// (sched/ideal.h, with P = the NPUs it spans) over the sum of those dimensions' bandwidth,
// no fixed delays. A collective holds its dimensions while it runs; collectives that share
// a dimension run one after another in issue order (a later one may start earlier if its
// dimensions are free), collectives on disjoint dimensions run at the same time.
#include <vector>

#include "net/network.h"
#include "sim/event_queue.h"
#include "sim/network_model.h"

namespace chorus::sim {

class IdealNetwork : public NetworkModel {
 public:
  explicit IdealNetwork(const net::Network& network);

  void start(int id, const workload::Node& comm, double now_ns) override;
  bool idle() const override { return events_.empty(); }
  double next_event_ns() const override { return events_.next_time_ns(); }
  void step(std::vector<int>& finished) override;
  double bytes_sent_per_npu() const override { return bytes_; }

  static double ideal_time_ns(const net::Network& network, const workload::Node& comm);
  static double ideal_bytes_per_npu(const net::Network& network, const workload::Node& comm);

 private:
  struct Pending {
    int id;
    const workload::Node* comm;
  };
  void dispatch(double now_ns);

  const net::Network& network_;
  std::vector<bool> busy_;
  std::vector<Pending> pending_;
  EventQueue<Pending> events_;
  double bytes_ = 0;
};

}  // namespace chorus::sim
