#pragma once
// Executes chunk schedules on a multi-dimensional network (the analytical network model of
// docs/themis-model.md) with the discrete-event core.
//
// Each dimension is a resource with a queue. A chunk stage arriving at a dimension first
// pays the stage's fixed delay A_K (steps x step latency); fixed delays of different
// chunks overlap freely. It then waits for the dimension's bandwidth, which serves one
// chunk at a time, at the full aggregate bandwidth, choosing among the waiting chunks by
// the intra-dimension policy (FIFO: first arrived; SCF: smallest stage first). So a
// dimension runs several chunks at once exactly when one chunk cannot keep it busy: while
// one chunk transfers, others are in their latency phase (Themis Sec. 4.3).
//
// Several collectives may be in flight at once (a training DAG issues them as it goes):
// their chunks meet in the same per-dimension queues and the policy orders them together.
#include <cstdint>
#include <queue>
#include <vector>

#include "net/network.h"
#include "sched/schedule.h"
#include "sim/collective_result.h"
#include "sim/event_queue.h"

namespace chorus::sim {

struct SimOptions {
  bool record_stages = false;  // keep every StageRecord (for traces and --schedules)
  // Run each dimension's chunk operations strictly in the schedule's dim_order (Themis
  // Sec. 4.6.2): a chunk that is ready out of turn waits. An order that contradicts the
  // chunks' own stage order deadlocks; the simulator then throws InputError naming the
  // dimensions and the chunk operations they wait for. Single collective only.
  bool enforce_dim_order = false;
  // At most this many chunks on a dimension at once (in their fixed delay, waiting for the
  // bandwidth or transferring); later arrivals queue in policy order. 0 = no limit (the
  // default rule above). 1 makes every stage pay A_K + n_K B_K exclusively, like ASTRA-sim
  // with one active chunk per dimension. Not applied with enforce_dim_order.
  int max_chunks_per_dim = 0;
  // Chunks one dimension sends at once, each at the dimension's whole bandwidth: 1 (the
  // dimension's bandwidth is shared in turn). More is ASTRA-sim's congestion-unaware meaning of
  // several active chunks per dimension: messages in flight do not share bandwidth.
  int transfers_per_dim = 1;
  // A chunk's consecutive stages on one dimension (an all-reduce's reduce-scatter and all-gather
  // on its last dimension) hold the dimension's slot in between, as ASTRA-sim runs them: one
  // all-reduce phase. Without it a queued chunk may take the slot between them.
  bool keep_dimension = false;
  // Keep each collective's per-dimension execution order (Sec. 4.6.2). A DAG run does not
  // need it and turns it off to keep memory flat over many iterations.
  bool record_dim_order = true;
};

// The per-dimension chunk executor, driven step by step so that a caller (the DAG executor)
// can interleave its own events and start collectives at any time.
class ChunkExecutor {
 public:
  ChunkExecutor(const net::Network& network, sched::IntraDimPolicy policy, const SimOptions& options = {});

  // Starts a collective: every chunk arrives at its first stage's dimension at `now_ns`.
  // Stage dimensions index the executor's network; `group_npus` is the number of NPUs the
  // collective spans (the product of the sizes of the dimensions it visits), which fixes an
  // all-gather's starting resident size. `schedule` must outlive the executor. Returns the
  // collective's id (0, 1, ... in start order).
  int start(const sched::Schedule& schedule, double group_npus, double now_ns);

  bool idle() const { return events_.empty(); }
  // Time of the next event (only when !idle()).
  double next_event_ns() const { return events_.next_time_ns(); }
  // Processes the next event; appends the id of a collective that finished with it.
  void step(std::vector<int>& finished);

  // Per-dimension totals over everything run so far (bytes, busy time, active intervals).
  const std::vector<DimMetrics>& dim_metrics() const { return dims_out_; }
  const std::vector<std::vector<std::pair<double, double>>>& active_intervals() const { return active_; }
  // Per collective.
  double end_ns(int collective) const { return colls_[static_cast<size_t>(collective)].end_ns; }
  std::vector<std::vector<sched::DimOp>>& dim_order(int collective) {
    return colls_[static_cast<size_t>(collective)].dim_order;
  }
  std::vector<StageRecord>& stages() { return stages_; }

  // With an enforced order the run can end with chunks stuck: throws InputError naming who
  // waits for whom.
  void check_all_finished() const;

 private:
  enum class EventKind : std::uint8_t { kLatencyDone, kTransferDone };
  struct Event {
    EventKind kind;
    int chunk;  // global chunk index
  };
  // A chunk waiting for a dimension's bandwidth.
  struct Waiting {
    double key;  // FIFO: arrival time; SCF: bytes the stage sends; LIFO: minus the collective's id
    double arrive_ns;
    std::uint64_t seq;  // global arrival counter: the final, deterministic tie-break
    int chunk;
  };
  struct WaitingLater {
    bool operator()(const Waiting& a, const Waiting& b) const {
      if (a.key != b.key) return a.key > b.key;
      if (a.arrive_ns != b.arrive_ns) return a.arrive_ns > b.arrive_ns;
      return a.seq > b.seq;
    }
  };
  struct ChunkState {
    int coll = 0;
    int local = 0;  // chunk index within its collective
    size_t stage = 0;
    double resident_bytes = 0;
    double arrive_ns = 0;
    double start_ns = 0;
    double bytes_sent = 0;
    std::uint64_t seq = 0;
    bool ready = false;  // fixed delay paid, waiting for the bandwidth (enforced-order mode)
  };
  struct DimState {
    std::priority_queue<Waiting, std::vector<Waiting>, WaitingLater> waiting;
    int transferring = 0;  // chunks sending now (at most SimOptions::transfers_per_dim)
    size_t next_op = 0;    // enforced-order mode: index into the schedule's dim_order
    int present = 0;       // chunks on this dimension (latency, waiting or transferring)
    int admitted = 0;      // chunks in their latency phase, waiting for bandwidth or transferring
    // Chunks that arrived while max_chunks_per_dim were admitted, in policy order.
    std::priority_queue<Waiting, std::vector<Waiting>, WaitingLater> pending;
    double active_since = 0;
  };
  struct CollState {
    const sched::Schedule* schedule;
    int first_chunk;
    int remaining;
    double end_ns = 0;
    std::vector<std::vector<sched::DimOp>> dim_order;
  };

  const std::vector<sched::Stage>& stages_of(int c) const {
    const auto& ch = chunks_[static_cast<size_t>(c)];
    return colls_[static_cast<size_t>(ch.coll)].schedule->chunks[static_cast<size_t>(ch.local)].stages;
  }
  const sched::Stage& stage_of(int c) const { return stages_of(c)[chunks_[static_cast<size_t>(c)].stage]; }
  void arrive(int c, double now);
  void admit(int c, double now);
  double policy_key(const ChunkState& ch) const;
  void latency_done(int c, double now);
  void try_start(int d, double now);
  void transfer_done(int c, double now, std::vector<int>& finished);

  const net::Network& net_;
  sched::IntraDimPolicy policy_;
  SimOptions options_;
  EventQueue<Event> events_;
  std::vector<ChunkState> chunks_;
  std::vector<DimState> dims_;
  std::vector<CollState> colls_;
  std::vector<DimMetrics> dims_out_;
  std::vector<std::vector<std::pair<double, double>>> active_;
  std::vector<StageRecord> stages_;
  // Chunk slots of finished collectives, by chunk count, for reuse by later collectives.
  std::vector<std::pair<size_t, int>> free_slots_;  // (num_chunks, first chunk)
  std::uint64_t arrivals_ = 0;
};

// One collective from time 0 to its end (`chorus sim collective`).
CollectiveResult simulate_schedule(const net::Network& network, const sched::Schedule& schedule,
                                   const SimOptions& options = {});

}  // namespace chorus::sim
