// SYNDICATE's enforcer on the runtime (enforcer.h).
#include "rt/enforcer/enforcer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "core/error.h"
#include "rt/errors.h"
#include "rt/runtime_instance.h"

namespace chorus::rt {

namespace {

bool share_channel(const EnforcedStep& a, const EnforcedStep& b) {
  for (int c : a.channels)
    if (std::find(b.channels.begin(), b.channels.end(), c) != b.channels.end()) return true;
  return false;
}

}  // namespace

Enforcer::Enforcer(EnforcerPlan plan) : Enforcer(default_runtime("enforcer"), std::move(plan)) {}

Enforcer::Enforcer(Runtime& runtime, EnforcerPlan plan) : runtime_(&runtime), plan_(std::move(plan)) {
  std::size_t total = 0;
  for (const auto& op : plan_.ops) total += op.steps.size();
  by_seq_.assign(total, {-1, -1});
  for (std::size_t o = 0; o < plan_.ops.size(); ++o) {
    const auto& op = plan_.ops[o];
    if (op.kind != CollectiveKind::kAllReduce && op.kind != CollectiveKind::kAllToAllSingle &&
        op.kind != CollectiveKind::kReduceScatter && op.kind != CollectiveKind::kAllGather)
      throw InputError(fmt::format("plan op {} ('{}')", o, op.name),
                       "the enforcer runs all_reduce, all_to_all, reduce_scatter and all_gather comm-ops");
    for (int d : op.deps)
      if (d < 0 || d >= static_cast<int>(o))
        throw InputError(fmt::format("plan op {} ('{}')", o, op.name),
                         fmt::format("dependency {} is not an earlier comm-op", d));
    for (std::size_t s = 0; s < op.steps.size(); ++s) {
      const auto& st = op.steps[s];
      const auto where = fmt::format("plan op {} ('{}') step {}", o, op.name, s);
      if (st.seq < 0 || static_cast<std::size_t>(st.seq) >= total ||
          by_seq_[static_cast<std::size_t>(st.seq)].first >= 0)
        throw InputError(where, fmt::format("sequence number {} is out of range or taken twice", st.seq));
      by_seq_[static_cast<std::size_t>(st.seq)] = {static_cast<int>(o), static_cast<int>(s)};
      for (int a : st.after)
        if (a < 0 || a >= static_cast<int>(s))
          throw InputError(where, fmt::format("parent {} is not an earlier step", a));
      if ((st.kind == CollectiveKind::kReduceScatter || st.kind == CollectiveKind::kAllGather) && !st.idle &&
          (st.blocks < 1 || st.offset + st.count > st.block))
        throw InputError(where, fmt::format("elements [{}, {}) are not inside a block of {}", st.offset,
                                            st.offset + st.count, st.block));
    }
  }
  staging_.resize(plan_.ops.size());
  unpacks_.assign(plan_.ops.size(), 0);
  for (std::size_t o = 0; o < plan_.ops.size(); ++o)
    for (const auto& st : plan_.ops[o].steps) {
      staging_[o].emplace_back(staging_elements(st) * dtype_bytes(plan_.dtype));
      if (st.kind == CollectiveKind::kAllGather && staging_elements(st) > 0) unpacks_[o] = 1;
    }
  // A step runs blocking when the next one in order waits for its completion anyway.
  blocking_.assign(total, 1);
  for (std::size_t k = 0; k + 1 < total; ++k) {
    const auto [o1, s1] = by_seq_[k];
    const auto [o2, s2] = by_seq_[k + 1];
    const auto& a = plan_.ops[static_cast<std::size_t>(o1)].steps[static_cast<std::size_t>(s1)];
    const auto& b = plan_.ops[static_cast<std::size_t>(o2)].steps[static_cast<std::size_t>(s2)];
    const bool parent = o1 == o2 && std::find(b.after.begin(), b.after.end(), s1) != b.after.end();
    bool dep_op = false;
    for (int d : plan_.ops[static_cast<std::size_t>(o2)].deps) dep_op = dep_op || d == o1;
    blocking_[k] = (parent || share_channel(a, b) || (dep_op && b.after.empty())) ? 1 : 0;
  }
}

Enforcer::~Enforcer() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::make_exception_ptr(CommError("enforcer destroyed during a run"));
    }
    cv_.notify_all();
    thread_.join();
  }
}

void Enforcer::start() {
  if (running_) throw InputError("enforcer", "start() while a run is in progress");
  const std::size_t n = plan_.ops.size();
  submitted_.assign(n, 0);
  submit_time_.assign(n, {});
  issued_.assign(n, 0);
  in_.assign(n, nullptr);
  out_.assign(n, nullptr);
  works_.assign(n, {});
  for (std::size_t o = 0; o < n; ++o) works_[o].resize(plan_.ops[o].steps.size());
  finished_.assign(n, 0);
  error_ = nullptr;
  stats_ = {};
  stats_.issued_ns.assign(by_seq_.size(), 0);
  clock_ = std::make_shared<Clock>();
  clock_->completed_ns.assign(by_seq_.size(), 0);
  clock_->pending = by_seq_.size();
  origin_ = std::chrono::steady_clock::now();
  running_ = true;
  thread_ = std::thread([this] { progress(); });
}

void Enforcer::submit(int id, void* in, void* out) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (id < 0 || id >= static_cast<int>(plan_.ops.size()))
      throw InputError("enforcer", fmt::format("no comm-op {}", id));
    if (submitted_[static_cast<std::size_t>(id)])
      throw InputError("enforcer", fmt::format("comm-op {} submitted twice", id));
    in_[static_cast<std::size_t>(id)] = in;
    out_[static_cast<std::size_t>(id)] = out;
    submitted_[static_cast<std::size_t>(id)] = 1;
    submit_time_[static_cast<std::size_t>(id)] = std::chrono::steady_clock::now();
  }
  cv_.notify_all();
}

void Enforcer::wait(int id) {
  std::vector<Work> works;
  {
    std::unique_lock<std::mutex> lock(mu_);
    const auto o = static_cast<std::size_t>(id);
    cv_.wait(lock, [&] { return error_ || issued_[o] == static_cast<int>(plan_.ops[o].steps.size()); });
    if (error_) std::rethrow_exception(error_);
    works = works_[o];
  }
  for (auto& w : works) w.wait();
  const auto o = static_cast<std::size_t>(id);
  if (!unpacks_[o]) return;
  std::lock_guard<std::mutex> lock(finish_mu_);
  if (finished_[o]) return;
  const auto& steps = plan_.ops[o].steps;
  for (std::size_t s = 0; s < steps.size(); ++s) finish_step(steps[s], plan_.dtype, out_[o], staging_[o][s].data());
  finished_[o] = 1;
}

std::size_t staging_elements(const EnforcedStep& s) {
  const bool ring = s.kind == CollectiveKind::kReduceScatter || s.kind == CollectiveKind::kAllGather;
  return ring && !s.idle && s.count < s.block ? s.count * static_cast<std::size_t>(s.blocks) : 0;
}

namespace {

// Segment `s` of block j, in a buffer of s.blocks blocks, and its place in the staging buffer.
void copy_blocks(const EnforcedStep& s, std::size_t elem, const char* from, char* to, bool to_staging) {
  const std::size_t n = s.count * elem;
  for (int j = 0; j < s.blocks; ++j) {
    const std::size_t strided = (static_cast<std::size_t>(j) * s.block + s.offset) * elem;
    const std::size_t packed = static_cast<std::size_t>(j) * n;
    if (to_staging)
      std::memcpy(to + packed, from + strided, n);
    else
      std::memcpy(to + strided, from + packed, n);
  }
}

// The step's slice of the comm-op's buffers as one operation of the API (rt/call.h).
Call step_call(const EnforcedStep& s, DType dtype, char* in, char* out, void* staging) {
  const std::size_t elem = dtype_bytes(dtype);
  char* buf = in + s.offset * elem;
  const bool strided = staging_elements(s) > 0;
  if (strided && staging == nullptr) throw InputError("enforcer", "a strided step without its staging buffer");
  switch (s.kind) {
    case CollectiveKind::kAllReduce:
      return calls::all_reduce(buf, buf, s.count, dtype, ReduceOp::sum);
    case CollectiveKind::kReduce:
      return calls::reduce(buf, buf, s.count, dtype, ReduceOp::sum, s.root);
    case CollectiveKind::kBroadcast:
      return calls::broadcast(buf, s.count, dtype, s.root);
    case CollectiveKind::kAllToAllv:
      return calls::all_to_allv(in, s.send_counts, s.send_displs, out, s.recv_counts, s.recv_displs, dtype);
    case CollectiveKind::kReduceScatter:
      if (!strided) return calls::reduce_scatter(in, out, s.count, dtype, ReduceOp::sum);
      copy_blocks(s, elem, in, static_cast<char*>(staging), true);
      return calls::reduce_scatter(staging, out + s.offset * elem, s.count, dtype, ReduceOp::sum);
    case CollectiveKind::kAllGather:
      return calls::all_gather(buf, strided ? staging : out, s.count, dtype);
    default:
      throw InputError("enforcer", fmt::format("a {} step is not run by the enforcer", to_string(s.kind)));
  }
}

}  // namespace

Work run_step(Runtime& runtime, const EnforcedStep& s, DType dtype, void* in_buf, void* out_buf, bool async,
              void* staging) {
  if (s.idle) return Work();
  const ScopedFlightLayer layer(FlightLayer::kEnforcer);
  return runtime.issue(s.group, step_call(s, dtype, static_cast<char*>(in_buf), static_cast<char*>(out_buf), staging),
                       async);
}

Work run_step(const EnforcedStep& s, DType dtype, void* in_buf, void* out_buf, bool async, void* staging) {
  if (s.idle) return Work();
  return run_step(default_runtime("enforcer"), s, dtype, in_buf, out_buf, async, staging);
}

void finish_step(const EnforcedStep& s, DType dtype, void* out, const void* staging) {
  if (s.kind == CollectiveKind::kAllGather && staging_elements(s) > 0)
    copy_blocks(s, dtype_bytes(dtype), static_cast<const char*>(staging), static_cast<char*>(out), false);
}

Work Enforcer::issue(int op, int step) {
  const auto o = static_cast<std::size_t>(op);
  const auto s = static_cast<std::size_t>(step);
  const auto& st = plan_.ops[o].steps[s];
  return run_step(*runtime_, st, plan_.dtype, in_[o], out_[o], !blocking_[static_cast<std::size_t>(st.seq)],
                  staging_[o][s].data());
}

void Enforcer::progress() {
  std::map<int, Work> channel_last;  // channel -> the last step issued on it
  try {
    for (const auto& [op, step] : by_seq_) {
      const auto o = static_cast<std::size_t>(op);
      {
        std::unique_lock<std::mutex> lock(mu_);
        const auto t0 = std::chrono::steady_clock::now();
        cv_.wait(lock, [&] { return error_ || submitted_[o]; });
        const auto t1 = std::chrono::steady_clock::now();
        stats_.submit_wait_ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
        // Part of the wait with another comm-op submitted and not yet fully issued.
        auto since = t1;
        for (std::size_t q = 0; q < plan_.ops.size(); ++q)
          if (q != o && submitted_[q] && issued_[q] < static_cast<int>(plan_.ops[q].steps.size()))
            since = std::min(since, std::max(t0, submit_time_[q]));
        stats_.order_wait_ns += std::chrono::duration<double, std::nano>(t1 - since).count();
        if (error_) return;
      }
      const auto& st = plan_.ops[o].steps[static_cast<std::size_t>(step)];
      if (st.after.empty())
        for (int d : plan_.ops[o].deps) wait(d);
      for (int a : st.after) works_[o][static_cast<std::size_t>(a)].wait();
      for (int c : st.channels)
        if (auto it = channel_last.find(c); it != channel_last.end()) it->second.wait();
      const auto seq = static_cast<std::size_t>(st.seq);
      stats_.issued_ns[seq] =
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - origin_).count();
      Work w = issue(op, step);
      w.on_complete([clock = clock_, seq, origin = origin_](std::exception_ptr) {
        const double t = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - origin).count();
        std::lock_guard<std::mutex> lock(clock->mu);
        clock->completed_ns[seq] = t;
        if (--clock->pending == 0) clock->cv.notify_all();
      });
      for (int c : st.channels) channel_last[c] = w;
      {
        std::lock_guard<std::mutex> lock(mu_);
        works_[o][static_cast<std::size_t>(step)] = w;
        ++issued_[o];
        stats_.issue_order.push_back(op * 65536 + step);
      }
      cv_.notify_all();
    }
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
    }
    cv_.notify_all();
  }
}

EnforcerStats Enforcer::finish() {
  if (!running_) throw InputError("enforcer", "finish() without start()");
  for (std::size_t o = 0; o < plan_.ops.size(); ++o) {
    try {
      wait(static_cast<int>(o));
    } catch (...) {
      if (thread_.joinable()) thread_.join();
      running_ = false;
      throw;
    }
  }
  thread_.join();
  running_ = false;
  if (error_) std::rethrow_exception(error_);
  {
    // Every operation has completed; their callbacks run right after the waiters wake.
    std::unique_lock<std::mutex> lock(clock_->mu);
    clock_->cv.wait(lock, [&] { return clock_->pending == 0; });
    stats_.completed_ns = clock_->completed_ns;
  }
  return stats_;
}

}  // namespace chorus::rt
