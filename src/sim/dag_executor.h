#pragma once
// Runs a training DAG on the discrete-event core: per pipeline stage (one, without a
// pipeline) a compute stream (ready compute nodes run one at a time, lowest node index first,
// i.e. in program order) and a network model that carries every communication node as soon
// as its dependencies are done, so communication overlaps computation wherever the DAG allows
// and several collectives share the network at once.
//
// Exposed communication (Themis Sec. 6.2, footnote 11) is the time a compute stream waits
// for communication: every idle gap before a compute node is blamed on the communication
// that made the node ready (followed through zero-work compute nodes), and the tail after
// the stream's last compute on its last communication, then on the pipeline (waiting for the
// other stages). So iteration time = compute + exposed, exactly, and exposed = data-parallel +
// model-parallel + pipeline, per stage.
#include <string>
#include <functional>
#include <memory>
#include <vector>

#include "net/network.h"
#include "sched/scheduler.h"
#include "sim/collective_result.h"
#include "sim/network_model.h"
#include "workload/compute_model.h"
#include "workload/dag.h"

namespace chorus::sim {

struct NodeTiming {
  double start_ns = 0;
  double end_ns = 0;
};

// How a run's time splits (Themis Fig. 12): per pipeline stage, and, in DagResult, the
// stages' mean (all iterations).
struct StageSplit {
  double compute_ns = 0;           // forward + backward + optimizer
  double forward_compute_ns = 0;   // forward and recomputed forward (Fig. 12 counts both as forward)
  double backward_compute_ns = 0;  // input and weight gradients
  double optimizer_compute_ns = 0;
  double exposed_comm_ns = 0;
  double exposed_dp_comm_ns = 0;
  double exposed_mp_comm_ns = 0;
  // Waiting for the neighbouring pipeline stage: the pipeline's bubble and the exposed part of
  // the activations and gradients sent between stages, and the wait for the slowest stage at
  // the end.
  double exposed_pp_comm_ns = 0;

  // Adds `weight` x each field of `other`.
  void add(const StageSplit& other, double weight);
};

// With pipeline stages (workload::Dag::stages > 1) the split's fields are the stages' means
// (each stage's own split in `stages`); every stage spans the whole run, so
// total = compute + exposed for each stage and for the mean.
struct DagResult : StageSplit {
  double total_ns = 0;  // all iterations
  int iterations = 1;
  double comm_active_ns = 0;      // time with at least one communication node in flight (stages' mean)
  double bytes_per_npu = 0;       // sent over all dimensions (stages' mean)
  double avg_bw_utilization = 0;  // Fig. 4: bytes / (total bandwidth x comm_active_ns)
  int compute_nodes = 0;
  int comm_nodes = 0;
  std::vector<NodeTiming> nodes;   // per DAG node
  std::vector<StageSplit> stages;  // per pipeline stage, when there are several
};

// `compute_ns[i]` is node i's compute time (ignored for comm nodes). `total_bandwidth_gbps`
// is the NPU's bandwidth over all dimensions (for avg_bw_utilization). One network model
// per pipeline stage (the first form: a DAG of one stage).
DagResult run_dag(const workload::Dag& dag, const std::vector<double>& compute_ns, NetworkModel& network,
                  double total_bandwidth_gbps);
// `progress` (optional) hears of completed nodes now and then: (done, total).
using DagProgress = std::function<void(std::size_t done, std::size_t total)>;
DagResult run_dag(const workload::Dag& dag, const std::vector<double>& compute_ns,
                  const std::vector<NetworkModel*>& networks, double total_bandwidth_gbps,
                  const DagProgress& progress = {});

// A DAG run stepped event by event by its caller, so that several DAGs (jobs sharing a fabric,
// sim/jobs) advance on one clock: run_dag is `while (!done()) step(); finish(...)`. The first nodes
// become ready at `start_ns`; DagResult::total_ns counts from there, node times are absolute. The
// DAG, the compute times and the networks must outlive the run.
class DagRunner;
class DagRun {
 public:
  DagRun(const workload::Dag& dag, const std::vector<double>& compute_ns, std::vector<NetworkModel*> networks,
         double start_ns = 0, DagProgress progress = {});
  ~DagRun();
  DagRun(const DagRun&) = delete;
  DagRun& operator=(const DagRun&) = delete;
  bool done() const;
  double next_event_ns() const;                   // only when !done()
  void step();                                    // processes the earliest event (a compute stream's first on ties)
  DagResult finish(double total_bandwidth_gbps);  // once done()

 private:
  std::unique_ptr<DagRunner> runner_;
};

struct WorkloadSimOptions {
  sched::SchedulerSpec scheduler = sched::parse_scheduler("themis-scf");
  sched::ThemisOptions themis;
  int chunks_per_collective = 64;  // Themis Sec. 5.3
  // At most this many chunks on a dimension at once, over all collectives in flight
  // (SimOptions::max_chunks_per_dim; ASTRA-sim's active-chunks-per-dimension); 0 = no limit.
  int max_chunks_per_dim = 0;
  int transfers_per_dim = 1;    // SimOptions::transfers_per_dim
  bool keep_dimension = false;  // SimOptions::keep_dimension
  workload::ComputeModel compute;
  bool record_stages = false;  // keep every chunk stage (for traces)
  std::vector<double> speeds;  // per NPU compute speed, empty: all 1 (sim/stragglers.h)
  DagProgress progress;        // see run_dag
};

struct WorkloadRun {
  DagResult result;
  std::vector<StageRecord> stages;  // with record_stages (not for "ideal"); collective = DAG node id
                                    // (its pipeline stage: the node's)
};

// The DAG on `network` under the scheduler: baseline / Themis on the analytical network,
// "ideal" on IdealNetwork.
WorkloadRun simulate_workload(const workload::Dag& dag, const net::Network& network, const WorkloadSimOptions& options);

}  // namespace chorus::sim
