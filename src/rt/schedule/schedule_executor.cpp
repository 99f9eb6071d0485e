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

ExecutorRun ScheduleExecutor::run(void* buf, std::size_t count) {
  const auto& s = schedule_;
  const std::size_t D = grid_.dims.size();
  const std::size_t eb = dtype_bytes(options_.dtype);
  const std::size_t e = chunk_elements(count);
  const int C = s.num_chunks;
  const bool a2a = s.op == CollectiveKind::kAllToAll;
  scratch_.resize((a2a ? 2 : 1) * count * eb);  // all-to-all: two areas of count elements
  char* bufs[2] = {static_cast<char*>(buf), scratch_.data()};
  const bool ag_only = s.op == CollectiveKind::kAllGather;
  // All-to-all: chunk c at c x e in each of the two areas.
  const std::size_t N = static_cast<std::size_t>(grid_.size());
  const std::size_t q = e / N;  // elements of a chunk's slot
  if (a2a) {
    for (int c = 0; c < C; ++c)
      for (std::size_t t = 0; t < N; ++t)
        std::memcpy(scratch_.data() + (static_cast<std::size_t>(c) * e + t * q) * eb,
                    static_cast<const char*>(buf) + (t * (count / N) + static_cast<std::size_t>(c) * q) * eb, q * eb);
  }
  auto area = [&](int c, std::size_t which) {
    return scratch_.data() + (which * count + static_cast<std::size_t>(c) * e) * eb;
  };
  const std::size_t s0 = ag_only ? D % 2 : 0;  // the buffer the first stage reads
  auto piece = [&](int c, std::size_t level, int which) {
    const Range r = range(c, e, level);
    return bufs[which] + (static_cast<std::size_t>(c) * e + r.begin) * eb;
  };
  if (ag_only && s0 == 1)  // every chunk's own piece where the first all-gather reads it
    for (int c = 0; c < C; ++c) std::memcpy(piece(c, D, 1), piece(c, D, 0), range(c, e, D).len * eb);

  ExecutorRun out;
  out.dims.resize(D);
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<int> next_stage(static_cast<std::size_t>(C), 0);
  std::vector<double> arrive(static_cast<std::size_t>(C), 0.0);
  std::exception_ptr error;
  bool abort = false;

  if (grid_.runtime == nullptr)
    throw InputError("schedule executor", "the rank grid has no runtime (make it with make_rank_grid)");
  Runtime& runtime = *grid_.runtime;
  runtime.issue(options_.tail_backend, calls::barrier(), false);
  const auto t0 = Clock::now();
  auto since = [&](Clock::time_point t) { return std::chrono::duration<double, std::nano>(t - t0).count(); };
  auto at = [&](double ns) { return t0 + std::chrono::nanoseconds(static_cast<long long>(ns)); };

  // A stage's real operation has returned. Emulated, the stage holds its dimension until n_K B_K
  // after it began if that is later (the model's clock: `begin` below). Then it is recorded and
  // its chunk's next stage may go. Returns the stage's end.
  auto finish = [&](int c, int k, const sched::Stage& st, double arrived, double start, double bytes, double resident) {
    double end = since(Clock::now());
    const double paced_end =
        options_.emulate ? start + coll::bandwidth_time_ns(options_.network->dims[static_cast<std::size_t>(st.dim)],
                                                           st.phase, resident)
                         : 0;
    if (end < paced_end) {
      std::this_thread::sleep_until(at(paced_end));
      end = paced_end;
    }
    {
      std::lock_guard lock(mutex);
      const auto d = static_cast<std::size_t>(st.dim);
      out.stages.push_back(ExecutedStage{c, k, st.dim, st.phase, arrived, start, end, bytes});
      out.dims[d].bytes_per_rank += bytes;
      out.dims[d].busy_ns += end - start;
      ++out.dims[d].stages;
      ++next_stage[static_cast<std::size_t>(c)];
      arrive[static_cast<std::size_t>(c)] = end;
    }
    cv.notify_all();
    return end;
  };
  auto dimension = [&](std::size_t d) {
    const auto& ops = s.dim_order[d];
    const Communicator& group = grid_.comms[d];
    const int p = grid_.dims[d];
    const net::Dimension* model = options_.network ? &options_.network->dims[d] : nullptr;
    double free_at = 0;  // the end of this dimension's previous stage
    // Emulated, a stage runs on the model's clock: it begins when the model begins it (its chunk
    // arrived A_K ago and the dimension is free) and ends n_K B_K later, or when its real operation
    // returns if that is later. These times, not the moments this thread woke, are what the next
    // stages are paced from, so the pacing's own delays (wake-ups, sleep overshoot) do not add up
    // along the chain of stages; a real operation or a group partner that is late does.
    auto begin = [&](double arrived, coll::Phase phase) {
      if (!options_.emulate) return since(Clock::now());
      const double t = std::max(arrived + coll::fixed_delay_ns(*model, phase), free_at);
      std::this_thread::sleep_until(at(t));
      return t;
    };
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const int c = ops[i].chunk;
      const int k = stage_of_op_[d][i];
      double arrived = 0;
      {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return abort || next_stage[static_cast<std::size_t>(c)] == k; });
        if (abort) return;
        arrived = arrive[static_cast<std::size_t>(c)];
      }
      const auto& st = s.chunks[static_cast<std::size_t>(c)].stages[static_cast<std::size_t>(k)];
      if (a2a) {
        // The chunk's slots are in area k % 2: pack into the other, exchange back, unpack.
        const std::size_t cur = static_cast<std::size_t>(k) % 2, other = 1 - cur;
        std::size_t stride = 1;
        for (std::size_t x = 0; x < d; ++x) stride *= static_cast<std::size_t>(grid_.dims[x]);
        const double resident = static_cast<double>(e * eb);
        const double bytes = model ? coll::stage_cost(*model, st.phase, resident).bytes_sent : resident * (p - 1) / p;
        const double start = begin(arrived, st.phase);
        permute_by_digit(area(c, cur), area(c, other), N, static_cast<std::size_t>(p), stride, q * eb, false);
        group.issue(
            calls::all_to_all_single(area(c, other), area(c, cur), e / static_cast<std::size_t>(p), options_.dtype));
        permute_by_digit(area(c, cur), area(c, other), N, static_cast<std::size_t>(p), stride, q * eb, true);
        free_at = finish(c, k, st, arrived, start, bytes, resident);
        continue;
      }
      const bool rs = st.phase == coll::Phase::kReduceScatter;
      // Cut level before and after the stage (see the header).
      const std::size_t j = rs ? static_cast<std::size_t>(k) : D - static_cast<std::size_t>(k) % D;
      const std::size_t from = j, to = rs ? j + 1 : j - 1;
      const std::size_t src = (s0 + static_cast<std::size_t>(k)) % 2, dst = (src + 1) % 2;
      const double resident = static_cast<double>(range(c, e, from).len * eb);
      const double bytes = model ? coll::stage_cost(*model, st.phase, resident).bytes_sent
                                 : (rs ? resident * (p - 1) / p : resident * (p - 1));
      const double start = begin(arrived, st.phase);
      if (rs)
        group.issue(calls::reduce_scatter(piece(c, from, static_cast<int>(src)), piece(c, to, static_cast<int>(dst)),
                                          range(c, e, to).len, options_.dtype, options_.op));
      else
        group.issue(calls::all_gather(piece(c, from, static_cast<int>(src)), piece(c, to, static_cast<int>(dst)),
                                      range(c, e, from).len, options_.dtype));
      free_at = finish(c, k, st, arrived, start, bytes, resident);
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t d = 0; d < D; ++d)
    threads.emplace_back([&, d] {
      try {
        dimension(d);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        abort = true;
        cv.notify_all();
      }
    });
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  if (a2a)  // the slots of every chunk (area D % 2) back to the caller's blocks: slot s = from rank s
    for (int c = 0; c < C; ++c)
      for (std::size_t src = 0; src < N; ++src)
        std::memcpy(static_cast<char*>(buf) + (src * (count / N) + static_cast<std::size_t>(c) * q) * eb,
                    area(c, D % 2) + src * q * eb, q * eb);
  if (s.op == CollectiveKind::kReduceScatter && D % 2 == 1)  // results are in the scratch buffer
    for (int c = 0; c < C; ++c) std::memcpy(piece(c, D, 0), piece(c, D, 1), range(c, e, D).len * eb);
  const std::size_t main = static_cast<std::size_t>(C) * e;
  if (main < count)
    runtime.issue(
        options_.tail_backend,
        calls::all_reduce(bufs[0] + main * eb, bufs[0] + main * eb, count - main, options_.dtype, options_.op), false);
  out.time_ns = since(Clock::now());
  std::sort(out.stages.begin(), out.stages.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  return out;
}

}  // namespace chorus::rt
