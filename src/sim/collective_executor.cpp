#include "sim/collective_executor.h"

#include <algorithm>
#include <cstdint>
#include <queue>

#include <fmt/format.h>

#include "coll/stage_cost.h"
#include "core/error.h"
#include "core/units.h"
#include "sched/ideal.h"
#include "sim/event_queue.h"

namespace chorus::sim {
namespace {

enum class EventKind : std::uint8_t { kLatencyDone, kTransferDone };

struct Event {
  EventKind kind;
  int chunk;
};

// A chunk waiting for a dimension's bandwidth.
struct Waiting {
  double key;         // FIFO: arrival time; SCF: bytes the stage sends
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
  bool transferring = false;
  size_t next_op = 0;  // enforced-order mode: index into the schedule's dim_order
  int present = 0;  // chunks on this dimension (latency, waiting or transferring)
  int admitted = 0;  // chunks in their latency phase, waiting for bandwidth or transferring
  // Chunks that arrived while max_chunks_per_dim were admitted, in policy order.
  std::priority_queue<Waiting, std::vector<Waiting>, WaitingLater> pending;
  double active_since = 0;
};

class Executor {
 public:
  Executor(const net::Network& network, const sched::Schedule& schedule, const SimOptions& options)
      : net_(network), sched_(schedule), options_(options) {}

  CollectiveResult run() {
    const size_t num_dims = net_.dims.size();
    if (options_.enforce_dim_order && sched_.dim_order.size() != num_dims)
      throw InputError("schedule", "enforcing the per-dimension order needs a dim_order for every dimension");
    dims_.resize(num_dims);
    result_.dims.resize(num_dims);
    result_.dim_order.resize(num_dims);
    result_.active_intervals.resize(num_dims);
    chunks_.resize(sched_.chunks.size());
    const double start_bytes =
        coll::initial_resident_bytes(sched_.op, sched_.chunk_bytes(), static_cast<double>(net_.num_npus()));
    for (size_t c = 0; c < chunks_.size(); ++c) {
      chunks_[c].resident_bytes = start_bytes;
      if (!sched_.chunks[c].stages.empty()) arrive(static_cast<int>(c), 0.0);
    }
    while (!events_.empty()) {
      const auto e = events_.pop();
      if (e.payload.kind == EventKind::kLatencyDone) {
        latency_done(e.payload.chunk, e.time_ns);
      } else {
        transfer_done(e.payload.chunk, e.time_ns);
      }
    }
    check_all_finished();
    finish();
    return std::move(result_);
  }

 private:
  const sched::Stage& stage_of(int c) const {
    return sched_.chunks[static_cast<size_t>(c)].stages[chunks_[static_cast<size_t>(c)].stage];
  }

  void arrive(int c, double now) {
    auto& ch = chunks_[static_cast<size_t>(c)];
    const auto& st = stage_of(c);
    const auto& dim = net_.dims[static_cast<size_t>(st.dim)];
    auto& ds = dims_[static_cast<size_t>(st.dim)];
    if (ds.present++ == 0) ds.active_since = now;
    ch.arrive_ns = now;
    ch.bytes_sent = coll::stage_cost(dim, st.phase, ch.resident_bytes).bytes_sent;
    ch.seq = arrivals_++;
    const int limit = options_.enforce_dim_order ? 0 : options_.max_chunks_per_dim;
    if (limit > 0 && ds.admitted >= limit) {
      ds.pending.push(Waiting{policy_key(ch), ch.arrive_ns, ch.seq, c});
    } else {
      admit(c, now);
    }
  }

  // The chunk starts its stage on the dimension: first the fixed delay A_K.
  void admit(int c, double now) {
    const auto& st = stage_of(c);
    const auto& dim = net_.dims[static_cast<size_t>(st.dim)];
    ++dims_[static_cast<size_t>(st.dim)].admitted;
    events_.schedule_at(now + coll::fixed_delay_ns(dim, st.phase), Event{EventKind::kLatencyDone, c});
  }

  double policy_key(const ChunkState& ch) const {
    return sched_.policy == sched::IntraDimPolicy::kFifo ? ch.arrive_ns : ch.bytes_sent;
  }

  void latency_done(int c, double now) {
    auto& ch = chunks_[static_cast<size_t>(c)];
    const int d = stage_of(c).dim;
    if (options_.enforce_dim_order) {
      ch.ready = true;
      try_start(d, now);
      return;
    }
    dims_[static_cast<size_t>(d)].waiting.push(Waiting{policy_key(ch), ch.arrive_ns, ch.seq, c});
    try_start(d, now);
  }

  void try_start(int d, double now) {
    auto& ds = dims_[static_cast<size_t>(d)];
    if (ds.transferring) return;
    int c = -1;
    if (options_.enforce_dim_order) {
      const auto& order = sched_.dim_order[static_cast<size_t>(d)];
      if (ds.next_op >= order.size()) return;
      const auto& op = order[ds.next_op];
      const auto& ch = chunks_[static_cast<size_t>(op.chunk)];
      if (!ch.ready || stage_of(op.chunk).dim != d || stage_of(op.chunk).phase != op.phase) return;
      c = op.chunk;
      ++ds.next_op;
      chunks_[static_cast<size_t>(c)].ready = false;
    } else {
      if (ds.waiting.empty()) return;
      c = ds.waiting.top().chunk;
      ds.waiting.pop();
    }
    ds.transferring = true;
    auto& ch = chunks_[static_cast<size_t>(c)];
    ch.start_ns = now;
    result_.dim_order[static_cast<size_t>(d)].push_back(sched::DimOp{c, stage_of(c).phase});
    const auto& dim = net_.dims[static_cast<size_t>(d)];
    events_.schedule_at(now + transfer_time_ns(ch.bytes_sent, dim.aggregate_bandwidth_gbps()),
                        Event{EventKind::kTransferDone, c});
  }

  void transfer_done(int c, double now) {
    auto& ch = chunks_[static_cast<size_t>(c)];
    const auto st = stage_of(c);
    const auto& dim = net_.dims[static_cast<size_t>(st.dim)];
    auto& ds = dims_[static_cast<size_t>(st.dim)];
    auto& dm = result_.dims[static_cast<size_t>(st.dim)];
    ds.transferring = false;
    --ds.admitted;
    dm.bytes_per_npu += ch.bytes_sent;
    dm.busy_ns += now - ch.start_ns;
    if (--ds.present == 0) result_.active_intervals[static_cast<size_t>(st.dim)].emplace_back(ds.active_since, now);
    if (options_.record_stages) {
      result_.stages.push_back(StageRecord{c, static_cast<int>(ch.stage), st.phase, st.dim, ch.arrive_ns,
                                           ch.start_ns, now, ch.bytes_sent});
    }
    ch.resident_bytes = coll::resident_after(st.phase, ch.resident_bytes, dim.size);
    end_ns_ = std::max(end_ns_, now);
    // The freed slot goes to a chunk that was already queued, before this chunk's next stage
    // (which may be on the same dimension) arrives.
    if (!ds.pending.empty()) {
      const int next = ds.pending.top().chunk;
      ds.pending.pop();
      admit(next, now);
    }
    if (++ch.stage < sched_.chunks[static_cast<size_t>(c)].stages.size()) arrive(c, now);
    try_start(st.dim, now);
  }

  // With an enforced order the run can end with chunks stuck: report who waits for whom.
  void check_all_finished() const {
    std::string stuck;
    for (size_t d = 0; options_.enforce_dim_order && d < dims_.size(); ++d) {
      const auto& order = sched_.dim_order[d];
      if (dims_[d].next_op < order.size()) {
        const auto& op = order[dims_[d].next_op];
        stuck += fmt::format("{}dim{} waits for chunk {} {}", stuck.empty() ? "" : "; ", d + 1, op.chunk,
                             coll::to_string(op.phase));
      }
    }
    for (size_t c = 0; c < chunks_.size() && stuck.empty(); ++c)
      if (chunks_[c].stage < sched_.chunks[c].stages.size()) stuck = fmt::format("chunk {} did not finish", c);
    if (!stuck.empty()) throw InputError("schedule", "the per-dimension order deadlocks: " + stuck);
  }

  void finish() {
    result_.time_ns = end_ns_;
    result_.ideal_time_ns = sched::ideal_time_ns(net_, sched_.op, sched_.size_bytes);
    result_.avg_bw_utilization = end_ns_ > 0 ? result_.ideal_time_ns / end_ns_ : 0.0;
    for (size_t k = 0; k < net_.dims.size(); ++k) {
      auto& dm = result_.dims[k];
      for (const auto& [b, e] : result_.active_intervals[k]) dm.active_ns += e - b;
      const double capacity = gbps_to_bytes_per_ns(net_.dims[k].aggregate_bandwidth_gbps()) * end_ns_;
      dm.utilization = capacity > 0 ? dm.bytes_per_npu / capacity : 0.0;
    }
  }

  const net::Network& net_;
  const sched::Schedule& sched_;
  SimOptions options_;
  EventQueue<Event> events_;
  std::vector<ChunkState> chunks_;
  std::vector<DimState> dims_;
  CollectiveResult result_;
  std::uint64_t arrivals_ = 0;
  double end_ns_ = 0;
};

}  // namespace

CollectiveResult simulate_schedule(const net::Network& network, const sched::Schedule& schedule,
                                   const SimOptions& options) {
  return Executor(network, schedule, options).run();
}

}  // namespace chorus::sim
