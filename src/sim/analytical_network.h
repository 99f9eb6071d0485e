#pragma once
// The analytical per-dimension network model as a NetworkModel: each collective is split
// into chunks and scheduled by the chosen scheduler (baseline / Themis) over the dimensions
// it spans; all collectives in flight share one ChunkExecutor, so their chunks meet in the
// same per-dimension queues under the intra-dimension policy.
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "sched/scheduler.h"
#include "sim/collective_executor.h"
#include "sim/network_model.h"

namespace chorus::sim {

class AnalyticalNetwork : public NetworkModel {
 public:
  AnalyticalNetwork(const net::Network& network, const sched::SchedulerSpec& scheduler, int chunks_per_collective,
                    const sched::ThemisOptions& themis = {}, const SimOptions& options = {});

  void start(int id, const workload::Node& comm, double now_ns) override;
  bool idle() const override { return executor_.idle(); }
  double next_event_ns() const override { return executor_.next_event_ns(); }
  void step(std::vector<int>& finished) override;
  double bytes_sent_per_npu() const override;

  ChunkExecutor& executor() { return executor_; }
  // Node id of the executor's collective `collective`.
  int node_of(int collective) const { return node_of_[static_cast<size_t>(collective)]; }

 private:
  // The schedule of one (op, bytes, dims) request, made once and reused (Themis's
  // Algorithm 1 is a pure function of the request).
  const sched::Schedule& schedule_for(const workload::Node& comm);

  const net::Network& network_;
  sched::SchedulerSpec scheduler_;
  int chunks_;
  sched::ThemisOptions themis_;
  ChunkExecutor executor_;
  std::map<std::tuple<int, double, std::vector<int>>, std::unique_ptr<sched::Schedule>> schedules_;
  std::vector<int> node_of_;
  std::vector<int> collective_done_;
};

}  // namespace chorus::sim
