#include "sim/dag_executor.h"

#include <algorithm>
#include <functional>
#include <queue>

#include "sim/analytical_network.h"
#include "sim/event_queue.h"
#include "sim/ideal_network.h"

namespace chorus::sim {
namespace {

using workload::NodeKind;

enum class Blame : std::uint8_t { kNone, kDataParallel, kModelParallel };

class DagRunner {
 public:
  DagRunner(const workload::Dag& dag, const std::vector<double>& compute_ns, NetworkModel& network)
      : dag_(dag), compute_ns_(compute_ns), net_(network) {
    const size_t n = dag.nodes.size();
    remaining_.resize(n);
    enabler_.assign(n, -1);
    blame_.assign(n, Blame::kNone);
    result_.nodes.resize(n);
    // Successors in CSR form.
    succ_begin_.assign(n + 1, 0);
    for (const auto& node : dag.nodes)
      for (int d : node.deps) ++succ_begin_[static_cast<size_t>(d) + 1];
    for (size_t i = 0; i < n; ++i) succ_begin_[i + 1] += succ_begin_[i];
    succ_.resize(succ_begin_[n]);
    auto fill = succ_begin_;
    for (size_t i = 0; i < n; ++i) {
      remaining_[i] = static_cast<int>(dag.nodes[i].deps.size());
      for (int d : dag.nodes[i].deps) succ_[fill[static_cast<size_t>(d)]++] = static_cast<int>(i);
    }
  }

  DagResult run(double total_bandwidth_gbps) {
    for (size_t i = 0; i < dag_.nodes.size(); ++i)
      if (remaining_[i] == 0) ready(static_cast<int>(i), 0.0);
    drain(0.0);
    std::vector<int> finished;
    double now = 0;
    while (true) {
      const bool has_compute = !compute_events_.empty();
      const bool has_net = !net_.idle();
      if (!has_compute && !has_net) break;
      if (has_compute && (!has_net || compute_events_.next_time_ns() <= net_.next_event_ns())) {
        const auto e = compute_events_.pop();
        now = e.time_ns;
        busy_ = false;
        compute_free_since_ = now;
        complete(e.payload, now);
      } else {
        now = net_.next_event_ns();
        finished.clear();
        net_.step(finished);
        for (int id : finished) {
          if (--in_flight_ == 0) result_.comm_active_ns += now - comm_since_;
          complete(id, now);
        }
      }
      drain(now);
    }
    result_.total_ns = now;
    result_.iterations = dag_.iterations;
    // The tail after the last compute waits for the last communication.
    add_exposed(now - compute_free_since_, last_comm_ >= 0 ? blame_[static_cast<size_t>(last_comm_)] : Blame::kNone);
    result_.compute_ns = result_.forward_compute_ns + result_.backward_compute_ns + result_.optimizer_compute_ns;
    result_.bytes_per_npu = net_.bytes_sent_per_npu();
    const double capacity = total_bandwidth_gbps / 8.0 * result_.comm_active_ns;
    result_.avg_bw_utilization = capacity > 0 ? result_.bytes_per_npu / capacity : 0.0;
    return std::move(result_);
  }

 private:
  const workload::Node& node(int i) const { return dag_.nodes[static_cast<size_t>(i)]; }

  void ready(int i, double now) {
    const auto& n = node(i);
    result_.nodes[static_cast<size_t>(i)].start_ns = now;
    if (n.kind == NodeKind::kCompute) {
      ++result_.compute_nodes;
      ready_compute_.push(i);
      return;
    }
    ++result_.comm_nodes;
    blame_[static_cast<size_t>(i)] =
        n.group == workload::CommGroup::kDataParallel ? Blame::kDataParallel : Blame::kModelParallel;
    if (n.bytes <= 0 || n.dims.empty()) {  // nothing to send (e.g. a group of one NPU)
      instant_.push_back(i);
      return;
    }
    if (in_flight_++ == 0) comm_since_ = now;
    net_.start(i, n, now);
  }

  void complete(int i, double now) {
    result_.nodes[static_cast<size_t>(i)].end_ns = now;
    if (node(i).kind == NodeKind::kComm) last_comm_ = i;
    for (size_t s = succ_begin_[static_cast<size_t>(i)]; s < succ_begin_[static_cast<size_t>(i) + 1]; ++s) {
      const int j = succ_[s];
      if (--remaining_[static_cast<size_t>(j)] == 0) {
        enabler_[static_cast<size_t>(j)] = i;
        if (node(j).kind == NodeKind::kCompute) blame_[static_cast<size_t>(j)] = blame_[static_cast<size_t>(i)];
        ready(j, now);
      }
    }
  }

  // Completes comm nodes with nothing to send and starts the compute stream if it is free.
  void drain(double now) {
    while (!instant_.empty()) {
      const int i = instant_.back();
      instant_.pop_back();
      complete(i, now);
    }
    if (busy_ || ready_compute_.empty()) return;
    const int j = ready_compute_.top();
    ready_compute_.pop();
    const int cause = enabler_[static_cast<size_t>(j)];
    add_exposed(now - compute_free_since_, cause >= 0 ? blame_[static_cast<size_t>(cause)] : Blame::kNone);
    const double t = compute_ns_[static_cast<size_t>(j)];
    switch (node(j).compute) {
      case workload::ComputeKind::kForward: result_.forward_compute_ns += t; break;
      case workload::ComputeKind::kInputGradient:
      case workload::ComputeKind::kWeightGradient: result_.backward_compute_ns += t; break;
      case workload::ComputeKind::kOptimizer: result_.optimizer_compute_ns += t; break;
    }
    result_.nodes[static_cast<size_t>(j)].start_ns = now;
    busy_ = true;
    compute_events_.schedule_at(now + t, j);
  }

  void add_exposed(double gap, Blame blame) {
    if (gap <= 0) return;
    result_.exposed_comm_ns += gap;
    if (blame == Blame::kModelParallel) result_.exposed_mp_comm_ns += gap;
    else result_.exposed_dp_comm_ns += gap;  // kNone cannot wait on anything but data-parallel sync here
  }

  const workload::Dag& dag_;
  const std::vector<double>& compute_ns_;
  NetworkModel& net_;
  std::vector<int> remaining_, enabler_, succ_;
  std::vector<size_t> succ_begin_;
  std::vector<Blame> blame_;
  std::priority_queue<int, std::vector<int>, std::greater<>> ready_compute_;
  std::vector<int> instant_;
  EventQueue<int> compute_events_;
  bool busy_ = false;
  double compute_free_since_ = 0;
  int in_flight_ = 0;
  double comm_since_ = 0;
  int last_comm_ = -1;
  DagResult result_;
};

}  // namespace

DagResult run_dag(const workload::Dag& dag, const std::vector<double>& compute_ns, NetworkModel& network,
                  double total_bandwidth_gbps) {
  return DagRunner(dag, compute_ns, network).run(total_bandwidth_gbps);
}

WorkloadRun simulate_workload(const workload::Dag& dag, const net::Network& network,
                              const WorkloadSimOptions& options) {
  workload::validate(dag, network.num_dims(), dag.name);
  std::vector<double> compute_ns(dag.nodes.size());
  for (size_t i = 0; i < dag.nodes.size(); ++i) compute_ns[i] = options.compute.node_time_ns(dag.nodes[i]);
  WorkloadRun run;
  if (options.scheduler.kind == sched::SchedulerKind::kIdeal) {
    IdealNetwork ideal(network);
    run.result = run_dag(dag, compute_ns, ideal, network.total_bandwidth_gbps());
    return run;
  }
  SimOptions sim;
  sim.record_stages = options.record_stages;
  AnalyticalNetwork analytical(network, options.scheduler, options.chunks_per_collective, options.themis, sim);
  run.result = run_dag(dag, compute_ns, analytical, network.total_bandwidth_gbps());
  run.stages = std::move(analytical.executor().stages());
  for (auto& s : run.stages) s.collective = analytical.node_of(s.collective);
  return run;
}

}  // namespace chorus::sim
