#include "sim/collective_executor.h"

#include <algorithm>

#include <fmt/format.h>

#include "coll/stage_cost.h"
#include "core/error.h"
#include "core/units.h"
#include "sched/ideal.h"

namespace chorus::sim {

ChunkExecutor::ChunkExecutor(const net::Network& network, sched::IntraDimPolicy policy, const SimOptions& options)
    : net_(network), policy_(policy), options_(options) {
  const size_t num_dims = net_.dims.size();
  dims_.resize(num_dims);
  dims_out_.resize(num_dims);
  active_.resize(num_dims);
}

int ChunkExecutor::start(const sched::Schedule& schedule, double group_npus, double now_ns) {
  const int id = static_cast<int>(colls_.size());
  if (options_.enforce_dim_order) {
    if (id > 0) throw InputError("schedule", "enforcing the per-dimension order needs a single collective");
    if (schedule.dim_order.size() != net_.dims.size())
      throw InputError("schedule", "enforcing the per-dimension order needs a dim_order for every dimension");
  }
  // Reuse the chunk slots of a finished collective of the same size, if there is one.
  const size_t n = schedule.chunks.size();
  int first = static_cast<int>(chunks_.size());
  const auto slot = std::find_if(free_slots_.begin(), free_slots_.end(), [&](const auto& f) { return f.first == n; });
  if (slot != free_slots_.end()) {
    first = slot->second;
    free_slots_.erase(slot);
  } else {
    chunks_.resize(chunks_.size() + n);
  }
  colls_.push_back(CollState{&schedule, first, 0, now_ns, {}});
  if (options_.record_dim_order) colls_.back().dim_order.resize(net_.dims.size());
  // A point-to-point transfer (a one-stage schedule of Phase::kPointToPoint) starts whole.
  const bool p2p = !schedule.chunks.empty() && !schedule.chunks[0].stages.empty() &&
                   schedule.chunks[0].stages[0].phase == coll::Phase::kPointToPoint;
  const double start_bytes =
      p2p ? schedule.chunk_bytes() : coll::initial_resident_bytes(schedule.op, schedule.chunk_bytes(), group_npus);
  for (size_t c = 0; c < n; ++c) {
    ChunkState ch;
    ch.coll = id;
    ch.local = static_cast<int>(c);
    ch.resident_bytes = start_bytes;
    chunks_[static_cast<size_t>(first) + c] = ch;
  }
  for (size_t c = 0; c < schedule.chunks.size(); ++c) {
    if (schedule.chunks[c].stages.empty()) continue;
    ++colls_.back().remaining;
    arrive(first + static_cast<int>(c), now_ns);
  }
  return id;
}

void ChunkExecutor::step(std::vector<int>& finished) {
  const auto e = events_.pop();
  if (e.payload.kind == EventKind::kLatencyDone) {
    latency_done(e.payload.chunk, e.time_ns);
  } else {
    transfer_done(e.payload.chunk, e.time_ns, finished);
  }
}

void ChunkExecutor::arrive(int c, double now) {
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
void ChunkExecutor::admit(int c, double now) {
  const auto& st = stage_of(c);
  const auto& dim = net_.dims[static_cast<size_t>(st.dim)];
  ++dims_[static_cast<size_t>(st.dim)].admitted;
  events_.schedule_at(now + coll::fixed_delay_ns(dim, st.phase), Event{EventKind::kLatencyDone, c});
}

double ChunkExecutor::policy_key(const ChunkState& ch) const {
  switch (policy_) {
    case sched::IntraDimPolicy::kFifo:
      return ch.arrive_ns;
    case sched::IntraDimPolicy::kSmallestChunkFirst:
      return ch.bytes_sent;
    case sched::IntraDimPolicy::kLifo:
      return -static_cast<double>(ch.coll);  // the collective started last first; then arrival order
  }
  return ch.arrive_ns;
}

void ChunkExecutor::latency_done(int c, double now) {
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

void ChunkExecutor::try_start(int d, double now) {
  auto& ds = dims_[static_cast<size_t>(d)];
  if (ds.transferring >= std::max(options_.transfers_per_dim, 1)) return;
  int c = -1;
  if (options_.enforce_dim_order) {
    const auto& order = colls_[0].schedule->dim_order[static_cast<size_t>(d)];
    if (ds.next_op >= order.size()) return;
    const auto& op = order[ds.next_op];
    const int g = colls_[0].first_chunk + op.chunk;
    const auto& ch = chunks_[static_cast<size_t>(g)];
    if (!ch.ready || stage_of(g).dim != d || stage_of(g).phase != op.phase) return;
    c = g;
    ++ds.next_op;
    chunks_[static_cast<size_t>(c)].ready = false;
  } else {
    if (ds.waiting.empty()) return;
    c = ds.waiting.top().chunk;
    ds.waiting.pop();
  }
  ++ds.transferring;
  auto& ch = chunks_[static_cast<size_t>(c)];
  ch.start_ns = now;
  if (options_.record_dim_order)
    colls_[static_cast<size_t>(ch.coll)].dim_order[static_cast<size_t>(d)].push_back(
        sched::DimOp{ch.local, stage_of(c).phase});
  const auto& dim = net_.dims[static_cast<size_t>(d)];
  events_.schedule_at(now + transfer_time_ns(ch.bytes_sent, coll::stage_bandwidth_gbps(dim, stage_of(c).phase)),
                      Event{EventKind::kTransferDone, c});
}

void ChunkExecutor::transfer_done(int c, double now, std::vector<int>& finished) {
  auto& ch = chunks_[static_cast<size_t>(c)];
  const auto st = stage_of(c);
  const auto& dim = net_.dims[static_cast<size_t>(st.dim)];
  auto& ds = dims_[static_cast<size_t>(st.dim)];
  auto& dm = dims_out_[static_cast<size_t>(st.dim)];
  auto& cs = colls_[static_cast<size_t>(ch.coll)];
  --ds.transferring;
  --ds.admitted;
  dm.bytes_per_npu += ch.bytes_sent;
  dm.busy_ns += now - ch.start_ns;
  if (--ds.present == 0) active_[static_cast<size_t>(st.dim)].emplace_back(ds.active_since, now);
  if (options_.record_stages) {
    stages_.push_back(StageRecord{ch.local, static_cast<int>(ch.stage), st.phase, st.dim, ch.arrive_ns, ch.start_ns,
                                  now, ch.bytes_sent, ch.coll});
  }
  ch.resident_bytes = coll::resident_after(st.phase, ch.resident_bytes, dim.size);
  cs.end_ns = std::max(cs.end_ns, now);
  // The freed slot goes to a chunk that was already queued, before this chunk's next stage
  // (which may be on the same dimension) arrives; with keep_dimension, a next stage on the same
  // dimension keeps it.
  const bool stays =
      options_.keep_dimension && ch.stage + 1 < stages_of(c).size() && stages_of(c)[ch.stage + 1].dim == st.dim;
  if (!stays && !ds.pending.empty()) {
    const int next = ds.pending.top().chunk;
    ds.pending.pop();
    admit(next, now);
  }
  if (++ch.stage < stages_of(c).size()) {
    arrive(c, now);
  } else if (--cs.remaining == 0) {
    finished.push_back(ch.coll);
    free_slots_.emplace_back(cs.schedule->chunks.size(), cs.first_chunk);
  }
  try_start(st.dim, now);
}

void ChunkExecutor::check_all_finished() const {
  std::string stuck;
  for (size_t d = 0; options_.enforce_dim_order && !colls_.empty() && d < dims_.size(); ++d) {
    const auto& order = colls_[0].schedule->dim_order[d];
    if (dims_[d].next_op < order.size()) {
      const auto& op = order[dims_[d].next_op];
      stuck += fmt::format("{}dim{} waits for chunk {} {}", stuck.empty() ? "" : "; ", d + 1, op.chunk,
                           coll::to_string(op.phase));
    }
  }
  for (size_t c = 0; c < chunks_.size() && stuck.empty(); ++c)
    if (chunks_[c].stage < stages_of(static_cast<int>(c)).size())
      stuck = fmt::format("chunk {} did not finish", chunks_[c].local);
  if (!stuck.empty()) throw InputError("schedule", "the per-dimension order deadlocks: " + stuck);
}

CollectiveResult simulate_schedule(const net::Network& network, const sched::Schedule& schedule,
                                   const SimOptions& options) {
  ChunkExecutor ex(network, schedule.policy, options);
  ex.start(schedule, static_cast<double>(network.num_npus()), 0.0);
  std::vector<int> finished;
  while (!ex.idle()) ex.step(finished);
  ex.check_all_finished();
  CollectiveResult result;
  const double end_ns = ex.end_ns(0);
  result.time_ns = end_ns;
  result.ideal_time_ns = sched::ideal_time_ns(network, schedule.op, schedule.size_bytes);
  result.avg_bw_utilization = end_ns > 0 ? result.ideal_time_ns / end_ns : 0.0;
  result.dims = ex.dim_metrics();
  result.dim_order = std::move(ex.dim_order(0));
  result.stages = std::move(ex.stages());
  result.active_intervals = ex.active_intervals();
  for (size_t k = 0; k < network.dims.size(); ++k) {
    auto& dm = result.dims[k];
    for (const auto& [b, e] : result.active_intervals[k]) dm.active_ns += e - b;
    const double capacity = gbps_to_bytes_per_ns(network.dims[k].aggregate_bandwidth_gbps()) * end_ns;
    dm.utilization = capacity > 0 ? dm.bytes_per_npu / capacity : 0.0;
  }
  return result;
}

}  // namespace chorus::sim
