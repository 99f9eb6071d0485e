#include "sim/dag_executor.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <queue>

#include <fmt/format.h>

#include "core/error.h"

#include "sim/analytical_network.h"
#include "sim/event_queue.h"
#include "sim/ideal_network.h"
#include "sim/stragglers.h"

namespace chorus::sim {

using workload::NodeKind;

// Named in the header (DagRun's implementation), so not in an anonymous namespace.
enum class Blame : std::uint8_t { kNone, kDataParallel, kModelParallel, kPipeline };

namespace {

Blame blame_of(workload::CommGroup group) {
  switch (group) {
    case workload::CommGroup::kDataParallel:
      return Blame::kDataParallel;
    case workload::CommGroup::kModelParallel:
      return Blame::kModelParallel;
    case workload::CommGroup::kPipeline:
      return Blame::kPipeline;
  }
  return Blame::kNone;
}

}  // namespace

class DagRunner {
 public:
  DagRunner(const workload::Dag& dag, const std::vector<double>& compute_ns, std::vector<NetworkModel*> networks,
            DagProgress progress)
      : dag_(dag),
        compute_ns_(compute_ns),
        nets_(std::move(networks)),
        progress_(std::move(progress)),
        stages_(nets_.size()) {
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

  // The first nodes become ready at `start_ns`; nothing before it counts as exposed.
  void begin(double start_ns) {
    start_ns_ = now_ = start_ns;
    for (auto& st : stages_) st.free_since = start_ns;
    for (size_t i = 0; i < dag_.nodes.size(); ++i)
      if (remaining_[i] == 0) ready(static_cast<int>(i), start_ns);
    drain(start_ns);
  }

  bool done() const { return compute_events_.empty() && !earliest_network(); }

  double next_event_ns() const {
    const auto s = next_source();
    return s ? nets_[*s]->next_event_ns() : compute_events_.next_time_ns();
  }

  // Processes the earliest event: a compute stream's, or a stage's network's (compute first on ties).
  void step() {
    const auto s = next_source();
    if (!s) {
      const auto e = compute_events_.pop();
      now_ = e.time_ns;
      auto& st = stage_of(e.payload);
      st.busy = false;
      st.free_since = now_;
      complete(e.payload, now_);
    } else {
      now_ = nets_[*s]->next_event_ns();
      finished_.clear();
      nets_[*s]->step(finished_);
      for (int id : finished_) {
        auto& st = stage_of(id);
        if (--st.in_flight == 0) st.comm_active_ns += now_ - st.comm_since;
        complete(id, now_);
      }
    }
    drain(now_);
  }

  DagResult finish(double total_bandwidth_gbps) {
    const double now = now_;
    result_.total_ns = now - start_ns_;
    result_.iterations = dag_.iterations;
    // Per stage: the tail after its last compute waits for its last communication, and then,
    // in a pipeline, for the other stages to finish. The reported split is the stages' mean,
    // so that iteration time = compute + exposed holds for each stage and for the mean.
    const double k = 1.0 / static_cast<double>(stages_.size());
    double bytes = 0, active = 0;
    for (auto& st : stages_) {
      const double own_end = st.last_comm >= 0
                                 ? std::max(st.free_since, result_.nodes[static_cast<size_t>(st.last_comm)].end_ns)
                                 : st.free_since;
      add_exposed(st, own_end - st.free_since,
                  st.last_comm >= 0 ? blame_[static_cast<size_t>(st.last_comm)] : Blame::kNone);
      add_exposed(st, now - std::max(own_end, st.free_since), Blame::kPipeline);
      st.split.compute_ns = st.split.forward_compute_ns + st.split.backward_compute_ns + st.split.optimizer_compute_ns;
      result_.add(st.split, k);
      bytes += nets_[static_cast<size_t>(&st - stages_.data())]->bytes_sent_per_npu();
      active += st.comm_active_ns;
      if (stages_.size() > 1) result_.stages.push_back(st.split);
    }
    result_.bytes_per_npu = k * bytes;
    result_.comm_active_ns = k * active;
    const double capacity = total_bandwidth_gbps / 8.0 * active;
    result_.avg_bw_utilization = capacity > 0 ? bytes / capacity : 0.0;
    return std::move(result_);
  }

 private:
  // One pipeline stage's compute stream and the bookkeeping of its network.
  struct Stage {
    std::priority_queue<int, std::vector<int>, std::greater<>> ready_compute;
    bool busy = false;
    double free_since = 0;
    int in_flight = 0;
    double comm_since = 0;
    double comm_active_ns = 0;
    int last_comm = -1;
    StageSplit split;
  };

  // The stage whose network has the earliest event (the lowest stage on ties), if any is busy.
  std::optional<size_t> earliest_network() const {
    std::optional<size_t> best;
    for (size_t s = 0; s < stages_.size(); ++s)
      if (!nets_[s]->idle() && (!best || nets_[s]->next_event_ns() < nets_[*best]->next_event_ns())) best = s;
    return best;
  }
  // Where the next event is: nothing = a compute stream (first on ties), else that stage's network.
  std::optional<size_t> next_source() const {
    const auto s = earliest_network();
    if (!compute_events_.empty() && (!s || compute_events_.next_time_ns() <= nets_[*s]->next_event_ns()))
      return std::nullopt;
    return s;
  }

  const workload::Node& node(int i) const { return dag_.nodes[static_cast<size_t>(i)]; }
  Stage& stage_of(int i) { return stages_[static_cast<size_t>(node(i).stage)]; }

  void ready(int i, double now) {
    const auto& n = node(i);
    result_.nodes[static_cast<size_t>(i)].start_ns = now;
    auto& st = stage_of(i);
    if (n.kind == NodeKind::kCompute) {
      ++result_.compute_nodes;
      st.ready_compute.push(i);
      return;
    }
    ++result_.comm_nodes;
    blame_[static_cast<size_t>(i)] = blame_of(n.group);
    if (n.bytes <= 0 || n.dims.empty()) {  // nothing to send (e.g. a group of one NPU)
      instant_.push_back(i);
      return;
    }
    if (st.in_flight++ == 0) st.comm_since = now;
    nets_[static_cast<size_t>(n.stage)]->start(i, n, now);
  }

  void complete(int i, double now) {
    result_.nodes[static_cast<size_t>(i)].end_ns = now;
    if (progress_ && (++completed_ & 4095) == 0) progress_(completed_, dag_.nodes.size());
    if (node(i).kind == NodeKind::kComm) stage_of(i).last_comm = i;
    for (size_t s = succ_begin_[static_cast<size_t>(i)]; s < succ_begin_[static_cast<size_t>(i) + 1]; ++s) {
      const int j = succ_[s];
      if (--remaining_[static_cast<size_t>(j)] == 0) {
        enabler_[static_cast<size_t>(j)] = i;
        if (node(j).kind == NodeKind::kCompute) blame_[static_cast<size_t>(j)] = blame_[static_cast<size_t>(i)];
        ready(j, now);
      }
    }
  }

  // Completes comm nodes with nothing to send and starts each compute stream that is free
  // and has work.
  void drain(double now) {
    while (!instant_.empty()) {
      const int i = instant_.back();
      instant_.pop_back();
      complete(i, now);
    }
    for (auto& st : stages_) start_compute(st, now);
  }

  void start_compute(Stage& st, double now) {
    if (st.busy || st.ready_compute.empty()) return;
    const int j = st.ready_compute.top();
    st.ready_compute.pop();
    const int cause = enabler_[static_cast<size_t>(j)];
    add_exposed(st, now - st.free_since, cause >= 0 ? blame_[static_cast<size_t>(cause)] : Blame::kNone);
    const double t = compute_ns_[static_cast<size_t>(j)];
    switch (node(j).compute) {
      case workload::ComputeKind::kForward:
        st.split.forward_compute_ns += t;
        break;
      case workload::ComputeKind::kInputGradient:
      case workload::ComputeKind::kWeightGradient:
        st.split.backward_compute_ns += t;
        break;
      case workload::ComputeKind::kOptimizer:
        st.split.optimizer_compute_ns += t;
        break;
    }
    result_.nodes[static_cast<size_t>(j)].start_ns = now;
    st.busy = true;
    compute_events_.schedule_at(now + t, j);
  }

  static void add_exposed(Stage& st, double gap, Blame blame) {
    if (gap <= 0) return;
    st.split.exposed_comm_ns += gap;
    if (blame == Blame::kModelParallel)
      st.split.exposed_mp_comm_ns += gap;
    else if (blame == Blame::kPipeline)
      st.split.exposed_pp_comm_ns += gap;
    else
      st.split.exposed_dp_comm_ns += gap;  // kNone cannot wait on anything but data-parallel sync here
  }

  const workload::Dag& dag_;
  const std::vector<double>& compute_ns_;
  std::vector<NetworkModel*> nets_;
  DagProgress progress_;
  double start_ns_ = 0, now_ = 0;
  std::vector<int> finished_;
  std::size_t completed_ = 0;
  std::vector<Stage> stages_;
  std::vector<int> remaining_, enabler_, succ_;
  std::vector<size_t> succ_begin_;
  std::vector<Blame> blame_;
  std::vector<int> instant_;
  EventQueue<int> compute_events_;
  DagResult result_;
};

void StageSplit::add(const StageSplit& o, double weight) {
  compute_ns += weight * o.compute_ns;
  forward_compute_ns += weight * o.forward_compute_ns;
  backward_compute_ns += weight * o.backward_compute_ns;
  optimizer_compute_ns += weight * o.optimizer_compute_ns;
  exposed_comm_ns += weight * o.exposed_comm_ns;
  exposed_dp_comm_ns += weight * o.exposed_dp_comm_ns;
  exposed_mp_comm_ns += weight * o.exposed_mp_comm_ns;
  exposed_pp_comm_ns += weight * o.exposed_pp_comm_ns;
}

DagResult run_dag(const workload::Dag& dag, const std::vector<double>& compute_ns, NetworkModel& network,
                  double total_bandwidth_gbps) {
  if (dag.stages != 1)
    throw InputError(dag.name, fmt::format("this network model runs one pipeline stage; the DAG has {}", dag.stages));
  return run_dag(dag, compute_ns, std::vector<NetworkModel*>{&network}, total_bandwidth_gbps);
}

DagResult run_dag(const workload::Dag& dag, const std::vector<double>& compute_ns,
                  const std::vector<NetworkModel*>& networks, double total_bandwidth_gbps,
                  const DagProgress& progress) {
  DagRun run(dag, compute_ns, networks, 0.0, progress);
  while (!run.done()) run.step();
  return run.finish(total_bandwidth_gbps);
}

DagRun::DagRun(const workload::Dag& dag, const std::vector<double>& compute_ns, std::vector<NetworkModel*> networks,
               double start_ns, DagProgress progress) {
  if (networks.size() != static_cast<size_t>(dag.stages))
    throw InputError(dag.name, fmt::format("{} pipeline stages but {} network models", dag.stages, networks.size()));
  runner_ = std::make_unique<DagRunner>(dag, compute_ns, std::move(networks), std::move(progress));
  runner_->begin(start_ns);
}

DagRun::~DagRun() = default;
bool DagRun::done() const { return runner_->done(); }
double DagRun::next_event_ns() const { return runner_->next_event_ns(); }
void DagRun::step() { runner_->step(); }
DagResult DagRun::finish(double total_bandwidth_gbps) { return runner_->finish(total_bandwidth_gbps); }

WorkloadRun simulate_workload(const workload::Dag& dag, const net::Network& network,
                              const WorkloadSimOptions& options) {
  workload::validate(dag, network.num_dims(), dag.name);
  std::vector<double> compute_ns(dag.nodes.size());
  for (size_t i = 0; i < dag.nodes.size(); ++i) compute_ns[i] = options.compute.node_time_ns(dag.nodes[i]);
  compute_ns = straggler_compute_ns(dag, network, std::move(compute_ns), options.speeds, "speeds");
  WorkloadRun run;
  // One network model per pipeline stage: a stage's NPUs have links of their own.
  const size_t stages = static_cast<size_t>(dag.stages);
  std::vector<NetworkModel*> nets;
  if (options.scheduler.kind == sched::SchedulerKind::kIdeal) {
    std::vector<std::unique_ptr<IdealNetwork>> ideal;
    for (size_t s = 0; s < stages; ++s)
      nets.push_back(ideal.emplace_back(std::make_unique<IdealNetwork>(network)).get());
    run.result = run_dag(dag, compute_ns, nets, network.total_bandwidth_gbps(), options.progress);
    return run;
  }
  SimOptions sim;
  sim.record_stages = options.record_stages;
  sim.max_chunks_per_dim = options.max_chunks_per_dim;
  sim.transfers_per_dim = options.transfers_per_dim;
  sim.keep_dimension = options.keep_dimension;
  std::vector<std::unique_ptr<AnalyticalNetwork>> analytical;
  for (size_t s = 0; s < stages; ++s)
    nets.push_back(analytical
                       .emplace_back(std::make_unique<AnalyticalNetwork>(
                           network, options.scheduler, options.chunks_per_collective, options.themis, sim))
                       .get());
  run.result = run_dag(dag, compute_ns, nets, network.total_bandwidth_gbps(), options.progress);
  for (const auto& a : analytical)
    for (auto& s : a->executor().stages()) {
      s.collective = a->node_of(s.collective);
      run.stages.push_back(std::move(s));
    }
  return run;
}

}  // namespace chorus::sim
