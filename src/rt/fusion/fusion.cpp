#include "rt/fusion/fusion.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include "core/error.h"
#include "core/fnv1a.h"
#include "core/split.h"
#include "core/units.h"
#include "rt/errors.h"
#include "rt/runtime.h"

namespace chorus::rt {

FusionOptions parse_fusion_options(std::string_view text, const std::string& field) {
  FusionOptions o;
  if (text == "on" || text == "1") return o;
  const auto parts = split_list(text);
  if (parts.size() != 2)
    throw InputError(field, fmt::format("'{}': expected B,T (buffer bytes, cycle microseconds), e.g. 1MiB,200", text));
  const Bytes b = parse_bytes(parts[0], field + " (B)");
  if (b < 8 || b > (Bytes{1} << 30))
    throw InputError(field, fmt::format("B = {} bytes: must be at least 8 and at most 1 GiB", b));
  std::int64_t t = 0;
  try {
    std::size_t used = 0;
    t = std::stoll(parts[1], &used);
    if (used != parts[1].size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw InputError(field, fmt::format("T = '{}': not a whole number of microseconds", parts[1]));
  }
  if (t < 1 || t > 10'000'000)
    throw InputError(field, fmt::format("T = {} us: must be at least 1 and at most 10^7", t));
  o.buffer_bytes = static_cast<std::size_t>(b);
  o.cycle_us = t;
  return o;
}

namespace {
std::atomic<int> g_fusion_instances{0};  // names the groups of each Fusion (the same count on every rank)
}  // namespace

// Types the Impl holds: in a named namespace (an anonymous one would give Impl internal-linkage
// members, which g++ warns about in unity builds).
namespace fusion_detail {

// One queued operation. Broadcasts, all-gathers, all-to-alls, gathers and scatters move bytes:
// they are queued as u8 counts (and reduce op sum), so that they fuse across dtypes. `count` is
// per rank: an all-gather's or gather's input, a reduce-scatter's or scatter's output, an
// all-to-all's block; an uneven all-to-all's largest block (this rank's until the cycle's
// agreement, then every rank's).
struct FusedOp {
  CollectiveKind kind;
  std::string backend;  // as submitted ("auto" resolved per buffer)
  const std::byte* in;  // broadcast: the buffer (in == out); scatter: size() x count elements, at the root only
  std::byte* out;       // all-gather, gather (at the root only): size() x count elements
  std::size_t count;
  DType dtype;
  ReduceOp op;
  int root;  // broadcast, reduce, gather, scatter; -1 otherwise
  std::shared_ptr<WorkState> state;
  std::vector<std::size_t> send_counts{}, send_displs{}, recv_counts{}, recv_displs{};  // all_to_allv: bytes per peer
  std::size_t bytes() const { return count * dtype_bytes(dtype); }
};

// What a fused buffer holds: operations of one kind, backend, dtype, reduce op and root.
using BufferKey = std::tuple<CollectiveKind, std::string, DType, ReduceOp, int>;
BufferKey key_of(const FusedOp& p) { return {p.kind, p.backend, p.dtype, p.op, p.root}; }

// Fused buffers, reused: fresh pages cost more than the copies. B bytes each, and wide ones of
// world x B bytes for the sides that hold a block per rank. Shared with the completion callbacks, which
// return buffers and count operations in flight.
struct FusionBuffers {
  std::size_t buffer_bytes;
  std::size_t world = 1;
  std::mutex mutex;
  std::condition_variable idle_cv;
  std::vector<std::unique_ptr<std::byte[]>> free[2];  // [wide]
  std::uint64_t in_flight = 0;                        // fused buffers issued and not completed

  std::unique_ptr<std::byte[]> take(bool wide = false) {
    {
      std::lock_guard lock(mutex);
      if (!free[wide].empty()) {
        auto b = std::move(free[wide].back());
        free[wide].pop_back();
        return b;
      }
    }
    return std::unique_ptr<std::byte[]>(new std::byte[wide ? buffer_bytes * world : buffer_bytes]);
  }
  void give(std::unique_ptr<std::byte[]> buffer, bool wide) {
    std::lock_guard lock(mutex);
    if (buffer && free[wide].size() < (wide ? 8u : 64u)) free[wide].push_back(std::move(buffer));
  }
  void done() {
    {
      std::lock_guard lock(mutex);
      --in_flight;
    }
    idle_cv.notify_all();
  }
};

// FNV-1a over what every rank must agree on: kind, backend, count, dtype, reduce op and root, in
// order (an uneven all-to-all's counts differ per rank: not its count).
std::uint64_t fusion_signature(const std::vector<FusedOp>& batch) {
  Fnv1a h;
  for (const auto& p : batch) {
    h.bytes(p.backend.data(), p.backend.size());
    h.word(p.kind == CollectiveKind::kAllToAllv ? 0 : p.count);
    h.word(static_cast<unsigned>(p.kind) << 16 | static_cast<unsigned>(p.dtype) << 8 | static_cast<unsigned>(p.op));
    h.word(static_cast<std::uint32_t>(p.root));
  }
  return h.digest() & ((std::uint64_t{1} << 62) - 1);  // room to negate it in an int64
}

}  // namespace fusion_detail

struct Fusion::Impl {
  using FusedOp = fusion_detail::FusedOp;
  using FusionBuffers = fusion_detail::FusionBuffers;

  FusionOptions options;
  std::vector<std::string> backends;          // concrete backends of this Fusion
  std::map<std::string, std::string> groups;  // backend -> its fusion group
  std::string control;                        // the group the cycle's agreement runs on
  int world_rank = 0;                         // = the rank in every group of this fusion
  std::shared_ptr<FusionBuffers> shared;

  mutable std::mutex mutex;
  std::condition_variable cv;       // the cycle thread waits for work
  std::condition_variable idle_cv;  // flush() waits for an empty queue
  std::deque<FusedOp> queue;
  std::size_t queued_bytes = 0;
  std::int64_t oldest_ns = 0;  // when the queue's first entry arrived
  bool stopping = false;
  bool issuing = false;        // the cycle thread holds operations taken from the queue
  std::exception_ptr broken;   // the error that stopped the cycle thread
  std::vector<FusedOp> batch;  // the cycle thread's: operations taken from the queue, not yet issued
  Stats stats;
  std::thread thread;

  Work submit(FusedOp op);
  void run();
  void cycle_loop();
  void agree_uneven_blocks();  // on `batch`
  void issue();                // `batch`, emptying it
  void issue_buffer(const std::string& backend, std::vector<FusedOp> ops);
  void issue_uneven(const std::string& target, std::vector<FusedOp> ops);
  static void fail(std::vector<FusedOp>& ops, const std::exception_ptr& error) {
    for (auto& p : ops) p.state->complete(error);
  }
};

namespace {

std::pair<std::int64_t, std::int64_t> fusion_min_of(const std::string& group, std::int64_t a, std::int64_t b) {
  std::int64_t v[2] = {a, b};
  rt::all_reduce(group, v, v, 2, DType::i64, ReduceOp::min);
  return {v[0], v[1]};
}

}  // namespace

Fusion::Fusion(const std::vector<std::string>& backends, const FusionOptions& options)
    : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  const int world_rank = rt::rank("auto");
  const std::string where = fmt::format("fusion on rank {}", world_rank);
  if (options.buffer_bytes < 8 || options.cycle_us < 1)
    throw InputError(where, fmt::format("B = {} bytes and T = {} us: B must be at least 8, T at least 1",
                                        options.buffer_bytes, options.cycle_us));
  im.options = options;
  im.world_rank = world_rank;
  const auto initialised = rt::backends();
  for (const auto& b : backends) {
    if (b == "auto") {
      for (const auto& i : initialised)
        if (std::find(im.backends.begin(), im.backends.end(), i) == im.backends.end()) im.backends.push_back(i);
      continue;
    }
    if (std::find(initialised.begin(), initialised.end(), b) == initialised.end())
      throw InputError(
          where, fmt::format("backend '{}' is not initialised (initialised: {})", b, fmt::join(initialised, ", ")));
    if (std::find(im.backends.begin(), im.backends.end(), b) == im.backends.end()) im.backends.push_back(b);
  }
  if (im.backends.empty()) throw InputError(where, "no backends given");
  const int id = g_fusion_instances.fetch_add(1);
  for (const auto& b : im.backends) {
    im.groups[b] = fmt::format("chorus-fusion{}/{}", id, b);
    rt::split(im.groups[b], b, 0, world_rank);
  }
  // The agreement is two small all-reduces per cycle: on shm when there is shm.
  const std::string control_backend =
      std::find(im.backends.begin(), im.backends.end(), "shm") != im.backends.end() ? "shm" : im.backends.front();
  im.control = fmt::format("chorus-fusion{}/control", id);
  rt::split(im.control, control_backend, 0, world_rank);
  im.shared = std::make_shared<fusion_detail::FusionBuffers>();
  im.shared->buffer_bytes = options.buffer_bytes;
  im.shared->world = static_cast<std::size_t>(rt::size("auto"));
  im.thread = std::thread([&im] { im.run(); });
}

Fusion::~Fusion() {
  Impl& im = *impl_;
  {
    std::lock_guard lock(im.mutex);
    im.stopping = true;
  }
  im.cv.notify_all();
  if (im.thread.joinable()) im.thread.join();
  std::unique_lock lock(im.shared->mutex);
  im.shared->idle_cv.wait(lock, [&] { return im.shared->in_flight == 0; });
}

const FusionOptions& Fusion::options() const { return impl_->options; }

Fusion::Stats Fusion::stats() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

Work Fusion::all_reduce(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
                        ReduceOp op) {
  return impl_->submit({CollectiveKind::kAllReduce, std::string(backend), static_cast<const std::byte*>(in),
                        static_cast<std::byte*>(out), count, dtype, op, -1, nullptr});
}

Work Fusion::broadcast(std::string_view backend, void* buf, std::size_t count, DType dtype, int root) {
  return impl_->submit({CollectiveKind::kBroadcast, std::string(backend), static_cast<const std::byte*>(buf),
                        static_cast<std::byte*>(buf), count * dtype_bytes(dtype), DType::u8, ReduceOp::sum, root,
                        nullptr});
}

Work Fusion::all_gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype) {
  return impl_->submit({CollectiveKind::kAllGather, std::string(backend), static_cast<const std::byte*>(in),
                        static_cast<std::byte*>(out), count * dtype_bytes(dtype), DType::u8, ReduceOp::sum, -1,
                        nullptr});
}

Work Fusion::reduce_scatter(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
                            ReduceOp op) {
  return impl_->submit({CollectiveKind::kReduceScatter, std::string(backend), static_cast<const std::byte*>(in),
                        static_cast<std::byte*>(out), count, dtype, op, -1, nullptr});
}

Work Fusion::all_to_all_single(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype) {
  return impl_->submit({CollectiveKind::kAllToAllSingle, std::string(backend), static_cast<const std::byte*>(in),
                        static_cast<std::byte*>(out), count * dtype_bytes(dtype), DType::u8, ReduceOp::sum, -1,
                        nullptr});
}

Work Fusion::all_to_allv(std::string_view backend, const void* in, const std::vector<std::size_t>& send_counts,
                         const std::vector<std::size_t>& send_displs, void* out,
                         const std::vector<std::size_t>& recv_counts, const std::vector<std::size_t>& recv_displs,
                         DType dtype) {
  const std::size_t world = impl_->shared->world;
  const std::string what = fmt::format("fused {} on rank {}", to_string(CollectiveKind::kAllToAllv), impl_->world_rank);
  const std::pair<const std::vector<std::size_t>*, const char*> lists[] = {{&send_counts, "send counts"},
                                                                           {&send_displs, "send displacements"},
                                                                           {&recv_counts, "receive counts"},
                                                                           {&recv_displs, "receive displacements"}};
  for (const auto& [list, name] : lists)
    if (list->size() != world) throw InputError(what, fmt::format("{} {} for {} ranks", list->size(), name, world));
  const std::size_t esize = dtype_bytes(dtype);
  fusion_detail::FusedOp p{CollectiveKind::kAllToAllv,
                           std::string(backend),
                           static_cast<const std::byte*>(in),
                           static_cast<std::byte*>(out),
                           0,
                           DType::u8,
                           ReduceOp::sum,
                           -1,
                           nullptr};
  std::size_t sent = 0, received = 0;
  for (std::size_t j = 0; j < world; ++j) {
    p.send_counts.push_back(send_counts[j] * esize);
    p.send_displs.push_back(send_displs[j] * esize);
    p.recv_counts.push_back(recv_counts[j] * esize);
    p.recv_displs.push_back(recv_displs[j] * esize);
    p.count = std::max({p.count, p.send_counts[j], p.recv_counts[j]});
    sent += send_counts[j];
    received += recv_counts[j];
  }
  if ((sent > 0 && in == nullptr) || (received > 0 && out == nullptr))
    throw InputError(what, fmt::format("null buffer for {} elements", sent > 0 && in == nullptr ? sent : received));
  return impl_->submit(std::move(p));
}

Work Fusion::reduce(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                    int root) {
  return impl_->submit({CollectiveKind::kReduce, std::string(backend), static_cast<const std::byte*>(in),
                        static_cast<std::byte*>(out), count, dtype, op, root, nullptr});
}

Work Fusion::gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, int root) {
  return impl_->submit({CollectiveKind::kGather, std::string(backend), static_cast<const std::byte*>(in),
                        static_cast<std::byte*>(out), count * dtype_bytes(dtype), DType::u8, ReduceOp::sum, root,
                        nullptr});
}

Work Fusion::scatter(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, int root) {
  return impl_->submit({CollectiveKind::kScatter, std::string(backend), static_cast<const std::byte*>(in),
                        static_cast<std::byte*>(out), count * dtype_bytes(dtype), DType::u8, ReduceOp::sum, root,
                        nullptr});
}

Work Fusion::Impl::submit(FusedOp p) {
  const std::string what = fmt::format("fused {}", to_string(p.kind));
  const std::string_view base =
      std::string_view(p.backend).substr(0, p.backend.find(':'));  // "mpi:ring": an algorithm of mpi
  if (p.backend != "auto" && std::find(backends.begin(), backends.end(), base) == backends.end())
    throw InputError(
        what, fmt::format("backend '{}' is not one of this fusion's ({}, auto)", p.backend, fmt::join(backends, ", ")));
  if (!takes_algorithm(p.kind) && base != p.backend)
    throw InputError(what, fmt::format("backend '{}': {} takes no algorithm", p.backend, to_string(p.kind)));
  const int world = static_cast<int>(shared->world);
  if (p.root != -1 && (p.root < 0 || p.root >= world))
    throw InputError(what, fmt::format("root {} is not a rank of the world (size {})", p.root, world));
  // A scatter reads `in`, a reduce and a gather write `out`, at the root only.
  const bool root_only_in = p.kind == CollectiveKind::kScatter,
             root_only_out = p.kind == CollectiveKind::kReduce || p.kind == CollectiveKind::kGather;
  if (p.count > 0 && p.kind != CollectiveKind::kAllToAllv &&
      ((p.in == nullptr && !(root_only_in && world_rank != p.root)) ||
       (p.out == nullptr && !(root_only_out && world_rank != p.root))))
    throw InputError(what, fmt::format("null buffer for {} elements", p.count));
  p.state = std::make_shared<WorkState>(what, nullptr);
  Work work(p.state);
  if (p.count == 0 &&
      p.kind != CollectiveKind::kAllToAllv) {  // nothing to move, on every rank alike (an uneven one: here only)
    p.state->complete(nullptr);
    return work;
  }
  bool wake = false;
  {
    std::lock_guard lock(mutex);
    if (stopping) throw std::logic_error(what + " after the Fusion began to stop");
    if (broken) {
      p.state->complete(broken);
      return work;
    }
    if (queue.empty()) {
      oldest_ns = steady_now_ns();
      wake = true;
    }
    queued_bytes += p.bytes();
    queue.push_back(std::move(p));
    wake = wake || queued_bytes >= options.buffer_bytes;
    ++stats.ops;
  }
  if (wake) cv.notify_all();
  return work;
}

void Fusion::flush() {
  Impl& im = *impl_;
  {
    std::unique_lock lock(im.mutex);
    im.idle_cv.wait(lock, [&] { return (im.queue.empty() && !im.issuing) || im.broken; });
  }
  std::unique_lock lock(im.shared->mutex);
  im.shared->idle_cv.wait(lock, [&] { return im.shared->in_flight == 0; });
}

void Fusion::Impl::run() {
  try {
    cycle_loop();
  } catch (...) {
    // An agreement failed (a peer died, a timeout): the operations the cycle had taken and every
    // queued one get the error, and so does every later one.
    for (auto& p : batch)
      if (p.state) p.state->complete(std::current_exception());
    batch.clear();
    std::deque<FusedOp> left;
    {
      std::lock_guard lock(mutex);
      broken = std::current_exception();
      left.swap(queue);
      queued_bytes = 0;
      issuing = false;
    }
    for (auto& p : left) p.state->complete(broken);
    idle_cv.notify_all();
  }
}

void Fusion::Impl::cycle_loop() {
  const std::int64_t cycle_ns = options.cycle_us * 1000;
  for (;;) {
    std::int64_t local_n = 0;
    bool local_stop = false;
    {
      std::unique_lock lock(mutex);
      cv.wait(lock, [&] { return stopping || !queue.empty(); });
      // A cycle starts T after the oldest entry arrived, or once B bytes wait.
      while (!stopping && queued_bytes < options.buffer_bytes) {
        const auto due = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(oldest_ns + cycle_ns));
        if (cv.wait_until(lock, due) == std::cv_status::timeout) break;
      }
      local_n = static_cast<std::int64_t>(queue.size());
      local_stop = stopping;
    }
    // How many operations every rank has (the minimum), and whether all ranks are stopping.
    const auto [k, all_stop] = fusion_min_of(control, local_n, local_stop ? 1 : 0);
    batch.clear();
    if (k > 0) {
      std::lock_guard lock(mutex);
      ++stats.cycles;
      issuing = true;
      for (std::int64_t i = 0; i < k; ++i) {
        queued_bytes -= queue.front().bytes();
        batch.push_back(std::move(queue.front()));
        queue.pop_front();
      }
      if (!queue.empty()) oldest_ns = steady_now_ns();  // the rest starts a new wait
    }
    if (k > 0) {
      // The same k operations on every rank? (min and -max of one hash per rank)
      const std::int64_t h = static_cast<std::int64_t>(fusion_detail::fusion_signature(batch));
      const auto [lo, minus_hi] = fusion_min_of(control, h, -h);
      if (lo != -minus_hi) {
        const FusedOp& first = batch.front();
        const auto error = std::make_exception_ptr(InputError(
            fmt::format("fused {} on rank {}", to_string(first.kind), rt::rank("auto")),
            fmt::format(
                "the ranks submitted different operations to the fusion (the {} operations of cycle {}, the first "
                "here a {} of {} elements of {}): every rank must submit the same operations in the same order",
                k, stats.cycles, to_string(first.kind), first.count, to_string(first.dtype))));
        fail(batch, error);
        batch.clear();
      } else {
        agree_uneven_blocks();
        issue();
      }
      {
        std::lock_guard lock(mutex);
        issuing = false;
      }
      idle_cv.notify_all();
    }
    if (k == 0 && all_stop == 1) break;
  }
  // Every rank stops and some rank has nothing queued: what is left here was not submitted
  // everywhere.
  std::deque<FusedOp> left;
  {
    std::lock_guard lock(mutex);
    left.swap(queue);
    queued_bytes = 0;
  }
  if (!left.empty()) {
    const auto error = std::make_exception_ptr(InputError(
        fmt::format("fusion on rank {}", rt::rank("auto")),
        fmt::format("{} operation(s) submitted on this rank were not submitted on every rank before the fusion stopped",
                    left.size())));
    for (auto& p : left) p.state->complete(error);
  }
  idle_cv.notify_all();
}

// Every rank's largest block of each uneven all-to-all in the batch (the batch is the same on
// every rank: same signature), so that every rank packs them alike; one that moves nothing on
// any rank completes here.
void Fusion::Impl::agree_uneven_blocks() {
  std::vector<std::int64_t> largest;
  for (const auto& p : batch)
    if (p.kind == CollectiveKind::kAllToAllv) largest.push_back(static_cast<std::int64_t>(p.count));
  if (largest.empty()) return;
  rt::all_reduce(control, largest.data(), largest.data(), largest.size(), DType::i64, ReduceOp::max);
  std::size_t next = 0, kept = 0;
  for (auto& p : batch) {
    if (p.kind == CollectiveKind::kAllToAllv) {
      p.count = static_cast<std::size_t>(largest[next++]);
      if (p.count == 0) {
        p.state->complete(nullptr);
        continue;
      }
    }
    if (&batch[kept] != &p) batch[kept] = std::move(p);
    ++kept;
  }
  batch.resize(kept);
}

// Packs the batch, in submission order, into buffers of at most B bytes per BufferKey.
void Fusion::Impl::issue() {
  using fusion_detail::BufferKey;
  std::map<BufferKey, std::pair<std::vector<FusedOp>, std::size_t>> open;  // ops and bytes of each open buffer
  std::vector<BufferKey> order;  // first appearance: buffers are issued in an order every rank shares
  auto close = [&](const BufferKey& key) {
    auto& [ops, bytes] = open[key];
    if (ops.empty()) return;
    std::string backend = std::get<1>(key);
    if (backend == "auto") backend = rt::resolve_backend("auto", std::get<0>(key), bytes);
    issue_buffer(backend, std::move(ops));
    ops.clear();
    bytes = 0;
  };
  for (auto& p : batch) {
    const BufferKey key = fusion_detail::key_of(p);
    if (open.find(key) == open.end()) order.push_back(key);
    auto& [ops, bytes] = open[key];
    if (bytes + p.bytes() > options.buffer_bytes) close(key);
    ops.push_back(std::move(p));
    bytes += ops.back().bytes();
  }
  for (const auto& key : order) close(key);
  batch.clear();
}

// Issues `ops` (one BufferKey, `backend` resolved) as one operation: alone on the caller's
// buffers when it is a single operation larger than B, else packed into a fused buffer and
// unpacked when it completes.
void Fusion::Impl::issue_buffer(const std::string& backend, std::vector<FusedOp> ops) {
  const FusedOp& first = ops.front();
  const CollectiveKind kind = first.kind;
  const DType dtype = first.dtype;
  const ReduceOp op = first.op;
  const int root = first.root;
  // "mpi:ring" (named, or chosen by auto from a tuning table): that algorithm on mpi's group.
  const auto colon = backend.find(':');
  const auto group = groups.find(backend.substr(0, colon));
  if (group == groups.end()) {  // "auto" resolved to a backend this fusion has no group on
    fail(ops, std::make_exception_ptr(
                  InputError(fmt::format("fused {}", to_string(kind)),
                             fmt::format("auto chose backend '{}', which this fusion does not use", backend))));
    return;
  }
  const std::string target = colon == std::string::npos ? group->second : group->second + backend.substr(colon);
  {
    std::lock_guard lock(mutex);
    ++stats.buffers;
  }
  {
    std::lock_guard lock(shared->mutex);
    ++shared->in_flight;
  }
  auto issue_one = [&](const std::byte* in, std::byte* out, std::size_t count) {
    switch (kind) {
      case CollectiveKind::kAllToAllv:  // alone only (issue_uneven packs): the operation's own counts
        return rt::all_to_allv(target, in, first.send_counts, first.send_displs, out, first.recv_counts,
                               first.recv_displs, DType::u8, /*async_op=*/true);
      case CollectiveKind::kBroadcast:
        return rt::broadcast(target, out, count, dtype, root, /*async_op=*/true);
      case CollectiveKind::kAllGather:
        return rt::all_gather(target, in, out, count, dtype, /*async_op=*/true);
      case CollectiveKind::kReduceScatter:
        return rt::reduce_scatter(target, in, out, count, dtype, op, /*async_op=*/true);
      case CollectiveKind::kAllToAllSingle:
        return rt::all_to_all_single(target, in, out, count, dtype, /*async_op=*/true);
      case CollectiveKind::kReduce:
        return rt::reduce(target, in, out, count, dtype, op, root, /*async_op=*/true);
      case CollectiveKind::kGather:
        return rt::gather(target, in, out, count, dtype, root, /*async_op=*/true);
      case CollectiveKind::kScatter:
        return rt::scatter(target, in, out, count, dtype, root, /*async_op=*/true);
      default:
        return rt::all_reduce(target, in, out, count, dtype, op, /*async_op=*/true);
    }
  };
  auto sh = shared;
  if (ops.size() == 1 && first.bytes() > options.buffer_bytes) {  // alone, on the caller's buffers
    try {
      Work w = issue_one(first.in, first.out, first.count);
      w.on_complete([sh, state = first.state](std::exception_ptr error) {
        state->complete(error);
        sh->done();
      });
    } catch (...) {  // refused before it was issued (an InputError of the backend)
      fail(ops, std::current_exception());
      sh->done();
    }
    return;
  }
  if (kind == CollectiveKind::kAllToAllv) {
    issue_uneven(target, std::move(ops));
    return;
  }
  // Pack, run, then copy each operation's part out. Per rank, an operation has `count` elements
  // (an all-gather's or gather's input, a reduce-scatter's or scatter's output, an all-to-all's
  // block); the fused buffer holds C of them. The sides that hold one block per rank (an
  // all-gather's and a gather's result, a reduce-scatter's and a scatter's input, both sides of
  // an all-to-all) are wide buffers of world x B bytes, block j holding every operation's block
  // j in submission order.
  const std::size_t esize = dtype_bytes(dtype);
  const bool wide_in = kind == CollectiveKind::kReduceScatter || kind == CollectiveKind::kAllToAllSingle ||
                       kind == CollectiveKind::kScatter;
  const bool wide_out =
      kind == CollectiveKind::kAllGather || kind == CollectiveKind::kAllToAllSingle || kind == CollectiveKind::kGather;
  const bool in_place =
      kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce;
  // What this rank sends and gets back: a broadcast's and a scatter's non-roots send nothing, a
  // broadcast's root gets nothing back, a reduce's and a gather's non-roots get nothing.
  const bool rooted_in = kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kScatter;
  const bool sends = !rooted_in || world_rank == root;
  const bool unpack = kind == CollectiveKind::kBroadcast                                   ? world_rank != root
                      : kind == CollectiveKind::kReduce || kind == CollectiveKind::kGather ? world_rank == root
                                                                                           : true;
  const std::size_t world = shared->world;
  auto in_buf = std::make_shared<std::unique_ptr<std::byte[]>>(shared->take(wide_in));
  auto out_buf = std::make_shared<std::unique_ptr<std::byte[]>>(in_place ? nullptr : shared->take(wide_out));
  std::size_t count = 0;
  for (const auto& p : ops) count += p.count;
  std::size_t offset = 0;  // elements, within a block
  for (const auto& p : ops) {
    if (sends && wide_in)
      for (std::size_t j = 0; j < world; ++j)
        std::memcpy(in_buf->get() + (j * count + offset) * esize, p.in + j * p.bytes(), p.bytes());
    else if (sends)
      std::memcpy(in_buf->get() + offset * esize, p.in, p.bytes());
    offset += p.count;
  }
  auto pending = std::make_shared<std::vector<FusedOp>>(std::move(ops));
  auto finish = [sh, pending, in_buf, out_buf, esize, count, world, unpack, wide_in, wide_out,
                 in_place](std::exception_ptr error) {
    const std::byte* result = in_place ? in_buf->get() : out_buf->get();
    std::size_t at = 0;  // elements, within a block
    for (auto& p : *pending) {
      if (!error && unpack && wide_out)
        for (std::size_t j = 0; j < world; ++j)
          std::memcpy(p.out + j * p.bytes(), result + (j * count + at) * esize, p.bytes());
      else if (!error && unpack)
        std::memcpy(p.out, result + at * esize, p.bytes());
      at += p.count;
      p.state->complete(error);
    }
    sh->give(std::move(*in_buf), wide_in);
    if (!in_place) sh->give(std::move(*out_buf), wide_out);
    sh->done();
  };
  try {
    issue_one(in_buf->get(), in_place ? in_buf->get() : out_buf->get(), count).on_complete(finish);
  } catch (...) {
    finish(std::current_exception());
  }
}

// Uneven all-to-alls packed: block j of the fused buffers holds every operation's block j for
// rank j, in submission order, at j x C bytes (C: the operations' agreed largest blocks summed,
// at most B, so the world x B wide buffers hold them). (One larger than B ran alone above.)
void Fusion::Impl::issue_uneven(const std::string& target, std::vector<FusedOp> ops) {
  auto sh = shared;
  const std::size_t world = sh->world;
  std::size_t stride = 0;
  for (const auto& p : ops) stride += p.count;
  auto in_buf = std::make_shared<std::unique_ptr<std::byte[]>>(sh->take(true));
  auto out_buf = std::make_shared<std::unique_ptr<std::byte[]>>(sh->take(true));
  Counts send_counts(world, 0), send_displs(world), recv_counts(world, 0), recv_displs(world);
  for (std::size_t j = 0; j < world; ++j) send_displs[j] = recv_displs[j] = j * stride;
  for (const auto& p : ops)
    for (std::size_t j = 0; j < world; ++j) {
      if (p.send_counts[j] > 0)
        std::memcpy(in_buf->get() + j * stride + send_counts[j], p.in + p.send_displs[j], p.send_counts[j]);
      send_counts[j] += p.send_counts[j];
      recv_counts[j] += p.recv_counts[j];
    }
  auto pending = std::make_shared<std::vector<FusedOp>>(std::move(ops));
  auto finish = [sh, pending, in_buf, out_buf, stride, world](std::exception_ptr error) {
    std::vector<std::size_t> at(world, 0);  // bytes, within block j
    for (auto& p : *pending) {
      for (std::size_t j = 0; j < world; ++j) {
        if (!error && p.recv_counts[j] > 0)
          std::memcpy(p.out + p.recv_displs[j], out_buf->get() + j * stride + at[j], p.recv_counts[j]);
        at[j] += p.recv_counts[j];
      }
      p.state->complete(error);
    }
    sh->give(std::move(*in_buf), true);
    sh->give(std::move(*out_buf), true);
    sh->done();
  };
  try {
    rt::all_to_allv(target, in_buf->get(), send_counts, send_displs, out_buf->get(), recv_counts, recv_displs,
                    DType::u8,
                    /*async_op=*/true)
        .on_complete(finish);
  } catch (...) {
    finish(std::current_exception());
  }
}

}  // namespace chorus::rt
