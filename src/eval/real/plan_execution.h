#pragma once
// A SYNDICATE plan executed on this job's ranks: each rank's motif steps built from a plan (the
// runtime groups they need made on every rank in the same order), steps timed on the ranks
// (calibration), and one run of the unrolled DAG through the enforcer with results checked.
// Shared by `chorus run workload` (workload_runner.h) and the motif microbenchmarks
// (motif_microbench.h). Collective functions must be called by every rank in the same order.
#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/stats.h"
#include "rt/enforcer/enforcer.h"
#include "syndicate/joint_optimizer.h"

namespace chorus::eval {

// Buffer layout of a comm-op on the runtime: f32 elements; all-to-all, reduce-scatter and
// all-gather as N blocks (block r of a reduce-scatter's result or an all-gather's input is rank r's).
struct Layout {
  CollectiveKind kind = CollectiveKind::kAllReduce;  // all_reduce | all_to_all_single | reduce_scatter | all_gather
  std::size_t elements = 0;                          // the whole tensor: N blocks, or the all-reduce's buffer
  std::size_t block = 0;                             // elements per block
  std::size_t in_elements() const { return kind == CollectiveKind::kAllGather ? block : elements; }
  std::size_t out_elements() const {
    return kind == CollectiveKind::kAllReduce ? 0 : kind == CollectiveKind::kReduceScatter ? block : elements;
  }
};

Layout layout_of(const syndicate::CommOp& op, int world);

// The runtime groups the motifs use, created on every rank in the same order.
class Groups {
 public:
  Groups(rt::Runtime* runtime, int world) : runtime_(runtime), world_(world) {}
  // The group name for `ranks` on `backend`; new_group() the first time.
  const std::string& get(const std::string& backend, const std::vector<int>& ranks);

 private:
  rt::Runtime* runtime_;
  int world_;
  std::set<std::string> names_;
};

// What rank `rank` does in step `s` of option `opt` of comm-op `op` (its motif, or idle).
rt::EnforcedStep rank_step(const syndicate::Topology& topo, const syndicate::CommOp& op,
                           const syndicate::OptionCost& opt, int s, const std::vector<coll::motif::Motif>& motifs,
                           const Layout& l, int rank, int world, Groups& groups);

struct Built {
  rt::EnforcerPlan plan;
  std::vector<Layout> layouts;
};

// This rank's steps of every comm-op of the plan, with the schedule's sequence numbers.
Built build_plan(const syndicate::Problem& p, const syndicate::PlanChoice& choice, const syndicate::Schedule& sched,
                 int rank, int world, Groups& groups);

// This job: rank, size, the backend for whole-world collectives, the groups made so far.
struct Job {
  rt::Runtime* runtime = nullptr;  // the session's own (JobSession)
  int me = 0;
  int world = 1;
  std::string world_backend;
  Groups* groups = nullptr;
};

// Every step of every option timed on the ranks (median of `reps` after one warm-up, slowest
// rank), steps of the same shape once; the problem retimed with them. Collective.
void calibrate(syndicate::Problem& p, const Job& job, int reps);

// The plan running now: this rank's steps, the compute order, the enforcer.
struct Active {
  syndicate::MethodResult planned;
  Built built;
  std::vector<int> compute_order;
  std::unique_ptr<rt::Enforcer> enforcer;
};

std::unique_ptr<Active> activate(const Job& job, const syndicate::Problem& problem, syndicate::MethodResult planned);

// How a run emulates the application.
struct RunKnobs {
  std::string compute = "sleep";  // sleep | busy
  double submit_jitter_us = 0;
};

struct RunStats {
  double elapsed_ns = 0;
  rt::EnforcerStats enforcer;
  double compute_ns = 0, exposed_ns = 0, submit_ns = 0;  // the application thread's time
  // Per DAG node (compute nodes; 0 for the others), ns since the enforcer's start: as the
  // enforcer's step times (EnforcerStats), for timelines.
  std::vector<double> compute_start_ns, compute_end_ns;
  std::vector<double> compute_ready_ns;  // when the thread turned to the node (then waited for its comm-ops)
  std::string check = "passed";
};

// One run of the unrolled DAG under the active plan: inputs filled, ranks lined up, compute
// emulated and comm-ops submitted by this thread while the enforcer runs their steps, every
// result checked. Collective.
RunStats run_once(const Job& job, const syndicate::Problem& problem, Active& active, const RunKnobs& knobs, Rng& jitter,
                  int run);

// The runtime started for a topology: the first backend of each channel (mpi only under mpirun;
// channels without a usable backend are dropped, an error if no path is left), the topology sized
// to the job ("host" takes the job's size), the job and its groups, on a runtime of its own
// (not the process's default), ended with the session.
struct JobSession {
  explicit JobSession(const std::string& topology_name);
  ~JobSession();
  JobSession(const JobSession&) = delete;
  JobSession& operator=(const JobSession&) = delete;
  std::unique_ptr<rt::Runtime> runtime;
  syndicate::Topology topology;
  Groups groups{nullptr, 1};
  Job job;
};

// InputError naming `field` (the options field that holds `text`) for an unknown method.
syndicate::Method parse_method(const std::string& text, const std::string& field = "method");

}  // namespace chorus::eval
