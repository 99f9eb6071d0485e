#include "rt/schedule/schedule_executor.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <fmt/format.h>
#include <mutex>
#include <thread>

#include "coll/stage_cost.h"
#include "core/error.h"
#include "rt/dtype.h"
#include "rt/runtime_instance.h"

namespace chorus::rt {

namespace {

using Clock = std::chrono::steady_clock;

std::string stage_name(int chunk, const sched::Stage& st) {
  return fmt::format("chunk {} {} on dimension {}", chunk, coll::to_string(st.phase), st.dim + 1);
}

}  // namespace

ScheduleExecutor::ScheduleExecutor(RankGrid grid, sched::Schedule schedule, ExecutorOptions options)
    : grid_(std::move(grid)), schedule_(std::move(schedule)), options_(std::move(options)) {
  validate();
}

void ScheduleExecutor::validate() {
  const auto& s = schedule_;
  const int D = static_cast<int>(grid_.dims.size());
  if (s.num_chunks < 1 || static_cast<int>(s.chunks.size()) != s.num_chunks)
    throw InputError("schedule", fmt::format("{} chunk schedules for num_chunks {}", s.chunks.size(), s.num_chunks));
  if (const auto* n = options_.network) {
    if (static_cast<int>(n->dims.size()) != D)
      throw InputError("schedule", fmt::format("the network has {} dimensions, the rank grid {}", n->dims.size(), D));
    for (int d = 0; d < D; ++d)
      if (n->dims[static_cast<std::size_t>(d)].size != grid_.dims[static_cast<std::size_t>(d)])
        throw InputError("schedule", fmt::format("dimension {} has {} NPUs in the network but {} ranks in the grid",
                                                 d + 1, n->dims[static_cast<std::size_t>(d)].size,
                                                 grid_.dims[static_cast<std::size_t>(d)]));
  } else if (options_.emulate) {
    throw InputError("emulate", "emulation needs the network description");
  }
  // Every chunk: one stage per dimension and phase, the all-gather half of an all-reduce the
  // reverse of its reduce-scatter half (the nesting of the hierarchical algorithm).
  nesting_.clear();
  const bool a2a = s.op == CollectiveKind::kAllToAll;
  for (int c = 0; c < s.num_chunks && a2a; ++c) {
    const auto& st = s.chunks[static_cast<std::size_t>(c)].stages;
    std::vector<int> seen_dims;
    for (const auto& x : st)
      if (x.phase == coll::Phase::kAllToAll && x.dim >= 0 && x.dim < D) seen_dims.push_back(x.dim);
    std::sort(seen_dims.begin(), seen_dims.end());
    if (st.size() != static_cast<std::size_t>(D) || seen_dims.size() != st.size() ||
        std::adjacent_find(seen_dims.begin(), seen_dims.end()) != seen_dims.end())
      throw InputError(
          "schedule",
          fmt::format("chunk {}: the executor needs one all-to-all stage on each of the {} dimensions", c, D));
  }
  for (int c = 0; c < s.num_chunks && !a2a; ++c) {
    const auto rs = s.chunks[static_cast<std::size_t>(c)].order(coll::Phase::kReduceScatter);
    const auto ag = s.chunks[static_cast<std::size_t>(c)].order(coll::Phase::kAllGather);
    const std::size_t want =
        s.op == CollectiveKind::kAllReduce ? 2 * static_cast<std::size_t>(D) : static_cast<std::size_t>(D);
    const auto& order = s.op == CollectiveKind::kAllGather ? ag : rs;
    auto is_permutation = [&](std::vector<int> v) {
      std::sort(v.begin(), v.end());
      for (int d = 0; d < D; ++d)
        if (static_cast<int>(v.size()) != D || v[static_cast<std::size_t>(d)] != d) return false;
      return true;
    };
    if (s.chunks[static_cast<std::size_t>(c)].stages.size() != want || !is_permutation(order) ||
        (s.op == CollectiveKind::kAllReduce && (!is_permutation(ag) || !std::equal(rs.begin(), rs.end(), ag.rbegin()))))
      throw InputError(
          "schedule",
          fmt::format("chunk {}: the executor needs {} visiting each of the {} dimensions once{}", c,
                      s.op == CollectiveKind::kAllReduce ? "reduce-scatter stages then all-gather stages" : "stages", D,
                      s.op == CollectiveKind::kAllReduce
                          ? ", the all-gathers in the reverse order of the reduce-scatters"
                          : ""));
    if (s.op == CollectiveKind::kAllGather) {
      nesting_.emplace_back(ag.rbegin(), ag.rend());
    } else {
      nesting_.push_back(rs);
    }
  }
  // dim_order: every stage of a dimension exactly once.
  if (static_cast<int>(s.dim_order.size()) != D)
    throw InputError("schedule",
                     fmt::format("dim_order has {} dimensions, the grid {} (simulate the schedule to fill it)",
                                 s.dim_order.size(), D));
  stage_of_op_.assign(static_cast<std::size_t>(D), {});
  std::vector<std::vector<char>> seen(s.chunks.size());
  for (std::size_t c = 0; c < s.chunks.size(); ++c) seen[c].assign(s.chunks[c].stages.size(), 0);
  for (int d = 0; d < D; ++d) {
    for (const auto& op : s.dim_order[static_cast<std::size_t>(d)]) {
      if (op.chunk < 0 || op.chunk >= s.num_chunks)
        throw InputError("schedule", fmt::format("dim_order of dimension {} names chunk {} (there are {})", d + 1,
                                                 op.chunk, s.num_chunks));
      const auto& st = s.chunks[static_cast<std::size_t>(op.chunk)].stages;
      int k = -1;
      for (std::size_t i = 0; i < st.size(); ++i)
        if (st[i].dim == d && st[i].phase == op.phase) k = static_cast<int>(i);
      if (k < 0 || seen[static_cast<std::size_t>(op.chunk)][static_cast<std::size_t>(k)]++)
        throw InputError("schedule",
                         fmt::format("dim_order of dimension {}: chunk {} {} {}", d + 1, op.chunk,
                                     coll::to_string(op.phase), k < 0 ? "has no such stage" : "appears twice"));
      stage_of_op_[static_cast<std::size_t>(d)].push_back(k);
    }
  }
  for (std::size_t c = 0; c < s.chunks.size(); ++c)
    for (std::size_t k = 0; k < s.chunks[c].stages.size(); ++k)
      if (!seen[c][k])
        throw InputError("schedule",
                         fmt::format("dim_order misses {}", stage_name(static_cast<int>(c), s.chunks[c].stages[k])));
  // Deadlock: run the orders symbolically; every dimension must be able to take its next op.
  std::vector<std::size_t> next_op(static_cast<std::size_t>(D), 0);
  std::vector<int> next_stage(s.chunks.size(), 0);
  for (bool moved = true; moved;) {
    moved = false;
    for (int d = 0; d < D; ++d) {
      auto& i = next_op[static_cast<std::size_t>(d)];
      const auto& ops = s.dim_order[static_cast<std::size_t>(d)];
      while (i < ops.size() &&
             next_stage[static_cast<std::size_t>(ops[i].chunk)] == stage_of_op_[static_cast<std::size_t>(d)][i]) {
        ++next_stage[static_cast<std::size_t>(ops[i].chunk)];
        ++i;
        moved = true;
      }
    }
  }
  std::string stuck;
  for (int d = 0; d < D; ++d) {
    const auto i = next_op[static_cast<std::size_t>(d)];
    const auto& ops = s.dim_order[static_cast<std::size_t>(d)];
    if (i >= ops.size()) continue;
    const int c = ops[i].chunk;
    const auto& st = s.chunks[static_cast<std::size_t>(c)].stages;
    const auto& waits = st[static_cast<std::size_t>(next_stage[static_cast<std::size_t>(c)])];
    stuck += fmt::format("{}dimension {} must run {} next, but that chunk first needs its {} stage on dimension {}",
                         stuck.empty() ? "" : "; ", d + 1,
                         stage_name(c, st[static_cast<std::size_t>(stage_of_op_[static_cast<std::size_t>(d)][i])]),
                         coll::to_string(waits.phase), waits.dim + 1);
  }
  if (!stuck.empty()) throw InputError("schedule", "the per-dimension order (dim_order) deadlocks: " + stuck);
}

std::size_t ScheduleExecutor::chunk_elements(std::size_t count) const {
  const std::size_t n = static_cast<std::size_t>(grid_.size());
  const std::size_t c = static_cast<std::size_t>(schedule_.num_chunks);
  if (schedule_.op == CollectiveKind::kAllReduce) return count / (c * n) * n;
  if (count % (c * n) != 0)
    throw InputError("executor",
                     fmt::format("{} of {} elements: the count must be a multiple of chunks x ranks = {} x {}",
                                 compact_name(schedule_.op), count, c, n));
  return count / c;
}

ScheduleExecutor::Range ScheduleExecutor::range(int c, std::size_t e, std::size_t level) const {
  Range r{0, e};
  for (std::size_t j = 0; j < level; ++j) {
    const int d = nesting_[static_cast<std::size_t>(c)][j];
    r.len /= static_cast<std::size_t>(grid_.dims[static_cast<std::size_t>(d)]);
    r.begin += static_cast<std::size_t>(grid_.coords[static_cast<std::size_t>(d)]) * r.len;
  }
  return r;
}

std::size_t ScheduleExecutor::main_elements(std::size_t count) const {
  return static_cast<std::size_t>(schedule_.num_chunks) * chunk_elements(count);
}

std::vector<std::pair<std::size_t, std::size_t>> ScheduleExecutor::owned_ranges(std::size_t count) const {
  if (schedule_.op != CollectiveKind::kReduceScatter) return {{0, count}};
  return piece_ranges(count);
}

std::vector<std::pair<std::size_t, std::size_t>> ScheduleExecutor::piece_ranges(std::size_t count) const {
  const std::size_t e = chunk_elements(count);
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (int c = 0; c < schedule_.num_chunks; ++c) {
    const Range r = range(c, e, grid_.dims.size());
    const std::size_t base = static_cast<std::size_t>(c) * e;
    out.emplace_back(base + r.begin, base + r.begin + r.len);
  }
  return out;
}

// The all-to-all layout. A chunk is piece c (of q elements) of every rank's N destination blocks,
// held in a chunk area of N x q elements as N slots. Slot positions are numbers in the grid's
// mixed radix (dimension 1 fastest, as rank numbers): digit e is the destination's coordinate
// e while dimension e has not run yet, and the source's coordinate e once it has. So the area
// starts as slot t = block for rank t and ends as slot s = block from rank s. A stage on
// dimension d sends slot p to the group peer whose coordinate d is p's digit d, and the receiver
// keeps it with digit d replaced by the sender's coordinate d: pack the slots by digit d (one
// all_to_all block per peer), exchange, unpack with the same permutation.
namespace {
// Copies between the slot order of an area and its order packed by digit d (stride = the product
// of the sizes of the dimensions before d); `unpack` reverses the direction. Units of q elements.
void permute_by_digit(const char* from, char* to, std::size_t slots, std::size_t p, std::size_t stride,
                      std::size_t unit_bytes, bool unpack) {
  const std::size_t outer = slots / (p * stride);
  for (std::size_t j = 0; j < p; ++j)
    for (std::size_t hi = 0; hi < outer; ++hi) {
      const std::size_t natural = (hi * p + j) * stride, packed = j * outer * stride + hi * stride;
      const std::size_t a = unpack ? packed : natural, b = unpack ? natural : packed;
      std::memcpy(to + b * unit_bytes, from + a * unit_bytes, stride * unit_bytes);
    }
}
}  // namespace

// One run of the executor over a buffer: its layout (the two areas stages alternate between),
// the chunks' progress shared by the dimensions' threads, and what the run records.
class ScheduleExecutor::Pass {
 public:
  Pass(ScheduleExecutor& ex, void* buf, std::size_t count)
      : ex_(ex),
        s_(ex.schedule_),
        D_(ex.grid_.dims.size()),
        eb_(dtype_bytes(ex.options_.dtype)),
        count_(count),
        e_(ex.chunk_elements(count)),
        C_(s_.num_chunks),
        a2a_(s_.op == CollectiveKind::kAllToAll),
        N_(static_cast<std::size_t>(ex.grid_.size())),
        q_(e_ / N_),
        s0_(s_.op == CollectiveKind::kAllGather ? D_ % 2 : 0),
        next_stage_(static_cast<std::size_t>(C_), 0),
        arrive_(static_cast<std::size_t>(C_), 0.0) {
    ex.scratch_.resize((a2a_ ? 2 : 1) * count * eb_);  // all-to-all: two areas of count elements
    bufs_[0] = static_cast<char*>(buf);
    bufs_[1] = ex.scratch_.data();
    out_.dims.resize(D_);
  }

  // The inputs where the first stages read them: all-to-all, chunk c at c x e in each of the two
  // areas; an all-gather that starts in the scratch buffer, every chunk's own piece there.
  void lay_out() {
    if (a2a_)
      for (int c = 0; c < C_; ++c)
        for (std::size_t t = 0; t < N_; ++t)
          std::memcpy(area(c, 0) + t * q_ * eb_,
                      bufs_[0] + (t * (count_ / N_) + static_cast<std::size_t>(c) * q_) * eb_, q_ * eb_);
    if (s_.op == CollectiveKind::kAllGather && s0_ == 1)
      for (int c = 0; c < C_; ++c) std::memcpy(piece(c, D_, 1), piece(c, D_, 0), ex_.range(c, e_, D_).len * eb_);
  }

  // Every dimension on its own thread; the first error stops the others and is rethrown.
  void run_dimensions() {
    t0_ = Clock::now();
    std::exception_ptr error;
    std::vector<std::thread> threads;
    for (std::size_t d = 0; d < D_; ++d)
      threads.emplace_back([&, d] {
        try {
          dimension(d);
        } catch (...) {
          std::lock_guard lock(mutex_);
          if (!error) error = std::current_exception();
          abort_ = true;
          cv_.notify_all();
        }
      });
    for (auto& t : threads) t.join();
    if (error) std::rethrow_exception(error);
  }

  // The results where the caller expects them; an all-reduce's flat tail.
  ExecutorRun finish_run(Runtime& runtime) {
    if (a2a_)  // the slots of every chunk (area D % 2) back to the caller's blocks: slot s = from rank s
      for (int c = 0; c < C_; ++c)
        for (std::size_t src = 0; src < N_; ++src)
          std::memcpy(bufs_[0] + (src * (count_ / N_) + static_cast<std::size_t>(c) * q_) * eb_,
                      area(c, D_ % 2) + src * q_ * eb_, q_ * eb_);
    if (s_.op == CollectiveKind::kReduceScatter && D_ % 2 == 1)  // results are in the scratch buffer
      for (int c = 0; c < C_; ++c) std::memcpy(piece(c, D_, 0), piece(c, D_, 1), ex_.range(c, e_, D_).len * eb_);
    const std::size_t main = static_cast<std::size_t>(C_) * e_;
    if (main < count_)
      runtime.issue(ex_.options_.tail_backend,
                    calls::all_reduce(bufs_[0] + main * eb_, bufs_[0] + main * eb_, count_ - main, ex_.options_.dtype,
                                      ex_.options_.op),
                    false);
    out_.time_ns = since(Clock::now());
    std::sort(out_.stages.begin(), out_.stages.end(),
              [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    return std::move(out_);
  }

 private:
  char* area(int c, std::size_t which) const {
    return ex_.scratch_.data() + (which * count_ + static_cast<std::size_t>(c) * e_) * eb_;
  }
  char* piece(int c, std::size_t level, int which) const {
    return bufs_[which] + (static_cast<std::size_t>(c) * e_ + ex_.range(c, e_, level).begin) * eb_;
  }
  double since(Clock::time_point t) const { return std::chrono::duration<double, std::nano>(t - t0_).count(); }
  Clock::time_point at(double ns) const { return t0_ + std::chrono::nanoseconds(static_cast<long long>(ns)); }

  // What a dimension's thread knows of its dimension.
  struct Dim {
    std::size_t d;
    const Communicator& group;
    int p;
    const net::Dimension* model;
    double free_at = 0;  // the end of this dimension's previous stage
  };

  // Emulated, a stage runs on the model's clock: it begins when the model begins it (its chunk
  // arrived A_K ago and the dimension is free) and ends n_K B_K later, or when its real operation
  // returns if that is later. These times, not the moments a thread woke, are what the next
  // stages are paced from, so the pacing's own delays (wake-ups, sleep overshoot) do not add up
  // along the chain of stages; a real operation or a group partner that is late does.
  double begin(const Dim& dim, double arrived, coll::Phase phase) const {
    if (!ex_.options_.emulate) return since(Clock::now());
    const double t = std::max(arrived + coll::fixed_delay_ns(*dim.model, phase), dim.free_at);
    std::this_thread::sleep_until(at(t));
    return t;
  }

  // A stage's real operation has returned. Emulated, the stage holds its dimension until n_K B_K
  // after it began if that is later. Then it is recorded and its chunk's next stage may go.
  // Returns the stage's end.
  double finish(int c, int k, const sched::Stage& st, double arrived, double start, double bytes, double resident) {
    double end = since(Clock::now());
    const double paced_end =
        ex_.options_.emulate
            ? start + coll::bandwidth_time_ns(ex_.options_.network->dims[static_cast<std::size_t>(st.dim)], st.phase,
                                              resident)
            : 0;
    if (end < paced_end) {
      std::this_thread::sleep_until(at(paced_end));
      end = paced_end;
    }
    {
      std::lock_guard lock(mutex_);
      const auto d = static_cast<std::size_t>(st.dim);
      out_.stages.push_back(ExecutedStage{c, k, st.dim, st.phase, arrived, start, end, bytes});
      out_.dims[d].bytes_per_rank += bytes;
      out_.dims[d].busy_ns += end - start;
      ++out_.dims[d].stages;
      ++next_stage_[static_cast<std::size_t>(c)];
      arrive_[static_cast<std::size_t>(c)] = end;
    }
    cv_.notify_all();
    return end;
  }

  // Dimension d's stages in its dim_order, each once its chunk's previous stage has ended.
  void dimension(std::size_t d) {
    const net::Dimension* model = ex_.options_.network ? &ex_.options_.network->dims[d] : nullptr;
    Dim dim{d, ex_.grid_.comms[d], ex_.grid_.dims[d], model};
    const auto& ops = s_.dim_order[d];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const int c = ops[i].chunk;
      const int k = ex_.stage_of_op_[d][i];
      double arrived = 0;
      {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return abort_ || next_stage_[static_cast<std::size_t>(c)] == k; });
        if (abort_) return;
        arrived = arrive_[static_cast<std::size_t>(c)];
      }
      const auto& st = s_.chunks[static_cast<std::size_t>(c)].stages[static_cast<std::size_t>(k)];
      dim.free_at = a2a_ ? all_to_all_stage(dim, c, k, st, arrived) : cut_stage(dim, c, k, st, arrived);
    }
  }

  // An all-to-all stage: the chunk's slots are in area k % 2: pack into the other, exchange
  // back, unpack (permute_by_digit).
  double all_to_all_stage(const Dim& dim, int c, int k, const sched::Stage& st, double arrived) {
    const std::size_t cur = static_cast<std::size_t>(k) % 2, other = 1 - cur;
    std::size_t stride = 1;
    for (std::size_t x = 0; x < dim.d; ++x) stride *= static_cast<std::size_t>(ex_.grid_.dims[x]);
    const double resident = static_cast<double>(e_ * eb_);
    const double bytes =
        dim.model ? coll::stage_cost(*dim.model, st.phase, resident).bytes_sent : resident * (dim.p - 1) / dim.p;
    const double start = begin(dim, arrived, st.phase);
    const auto p = static_cast<std::size_t>(dim.p);
    permute_by_digit(area(c, cur), area(c, other), N_, p, stride, q_ * eb_, false);
    dim.group.issue(calls::all_to_all_single(area(c, other), area(c, cur), e_ / p, ex_.options_.dtype));
    permute_by_digit(area(c, cur), area(c, other), N_, p, stride, q_ * eb_, true);
    return finish(c, k, st, arrived, start, bytes, resident);
  }

  // A reduce-scatter stage (one more cut of the chunk's range) or an all-gather stage (one cut
  // undone), from one buffer to the other.
  double cut_stage(const Dim& dim, int c, int k, const sched::Stage& st, double arrived) {
    const bool rs = st.phase == coll::Phase::kReduceScatter;
    // Cut level before and after the stage (see the header).
    const std::size_t j = rs ? static_cast<std::size_t>(k) : D_ - static_cast<std::size_t>(k) % D_;
    const std::size_t from = j, to = rs ? j + 1 : j - 1;
    const int src = static_cast<int>((s0_ + static_cast<std::size_t>(k)) % 2), dst = 1 - src;
    const double resident = static_cast<double>(ex_.range(c, e_, from).len * eb_);
    const double bytes = dim.model ? coll::stage_cost(*dim.model, st.phase, resident).bytes_sent
                                   : (rs ? resident * (dim.p - 1) / dim.p : resident * (dim.p - 1));
    const double start = begin(dim, arrived, st.phase);
    if (rs)
      dim.group.issue(calls::reduce_scatter(piece(c, from, src), piece(c, to, dst), ex_.range(c, e_, to).len,
                                            ex_.options_.dtype, ex_.options_.op));
    else
      dim.group.issue(
          calls::all_gather(piece(c, from, src), piece(c, to, dst), ex_.range(c, e_, from).len, ex_.options_.dtype));
    return finish(c, k, st, arrived, start, bytes, resident);
  }

  ScheduleExecutor& ex_;
  const sched::Schedule& s_;
  const std::size_t D_, eb_, count_, e_;
  const int C_;
  const bool a2a_;
  const std::size_t N_, q_;  // ranks; elements of a chunk's slot (all-to-all)
  const std::size_t s0_;     // the buffer the first stage reads
  char* bufs_[2] = {nullptr, nullptr};
  Clock::time_point t0_{};
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<int> next_stage_;
  std::vector<double> arrive_;
  bool abort_ = false;
  ExecutorRun out_;
};

ExecutorRun ScheduleExecutor::run(void* buf, std::size_t count) {
  const ScopedFlightLayer layer(FlightLayer::kExecutor);
  if (grid_.runtime == nullptr)
    throw InputError("schedule executor", "the rank grid has no runtime (make it with make_rank_grid)");
  Pass pass(*this, buf, count);
  pass.lay_out();
  grid_.runtime->issue(options_.tail_backend, calls::barrier(), false);
  pass.run_dimensions();
  return pass.finish_run(*grid_.runtime);
}

}  // namespace chorus::rt
