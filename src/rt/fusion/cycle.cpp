// Tensor fusion's cycle thread: a cycle starts T after the oldest queued operation arrived (or
// once B bytes wait); the ranks agree on how many operations every rank has (the minimum) and on
// their signature, then on the uneven all-to-alls' largest blocks, and the batch is issued
// (packing.cpp). A failed agreement fails every operation, queued and later.
#include <fmt/format.h>

#include <chrono>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/fnv1a.h"
#include "rt/fusion/fusion_impl.h"
#include "rt/errors.h"
#include "rt/runtime.h"

namespace chorus::rt {

namespace fusion_detail {

// FNV-1a over what every rank must agree on: kind, backend, count, dtype, reduce op and root, in
// order (an uneven all-to-all's counts differ per rank: not its count).
std::uint64_t fusion_signature(const std::vector<FusedOp>& batch) {
  Fnv1a h;
  for (const auto& p : batch) {
    h.bytes(p.backend.data(), p.backend.size());
    h.word(p.op == CollectiveKind::kAllToAllv ? 0 : p.count);
    h.word(static_cast<unsigned>(p.op) << 16 | static_cast<unsigned>(p.dtype) << 8 |
           static_cast<unsigned>(p.reduce_op));
    h.word(static_cast<std::uint32_t>(p.root));
  }
  return h.digest() & ((std::uint64_t{1} << 62) - 1);  // room to negate it in an int64
}

}  // namespace fusion_detail

namespace fusion_detail {

void least_over_ranks(const Communicator& control, std::int64_t* values, std::size_t n) {
  control.issue(calls::all_reduce(values, values, n, DType::i64, ReduceOp::min));
}

}  // namespace fusion_detail

namespace {

using fusion_detail::CycleCounts;

CycleCounts exchange_counts(const Communicator& control, std::int64_t queued, std::int64_t submitted, bool stop) {
  // One all-reduce (min) of each value and of its negation (-min(-x) is the maximum).
  std::int64_t v[5] = {queued, submitted, -submitted, stop ? 1 : 0, stop ? -1 : 0};
  fusion_detail::least_over_ranks(control, v, 5);
  return {v[0], v[1], -v[2], v[3] == 1, v[4] == -1};
}

// "a fused all_reduce of 16 elements of f32", the first of the operations left waiting.
std::string describe_first(const fusion_detail::FusedOp& p) {
  return fmt::format("a fused {} of {} elements of {}", to_string(p.op), p.count, to_string(p.dtype));
}

}  // namespace

void Fusion::Impl::run() {
  try {
    cycle_loop();
  } catch (const std::exception& e) {
    // An agreement failed (a peer died, a timeout): the operations the cycle had taken and every
    // queued one get the error, saying where it arose, and so does every later one.
    std::size_t waiting = batch.size();
    {
      std::lock_guard lock(mutex);
      waiting += queue.size();
    }
    const std::string what = fmt::format(
        "fusion on rank {}: the cycle's agreement with the other ranks failed ({} fused operation(s) waiting, {} "
        "submitted on this rank in all): {}",
        world_rank, waiting, submitted_count(), e.what());
    std::exception_ptr error;
    if (dynamic_cast<const TimeoutError*>(&e) != nullptr)
      error = std::make_exception_ptr(TimeoutError(what));
    else if (dynamic_cast<const CommError*>(&e) != nullptr)
      error = std::make_exception_ptr(CommError(what));
    else
      error = std::current_exception();
    for (auto& p : batch)
      if (p.state) p.state->complete(error);
    batch.clear();
    std::deque<FusedOp> left;
    {
      std::lock_guard lock(mutex);
      broken = error;
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
    std::int64_t local_n = 0, submitted = 0;
    bool local_stop = false;
    {
      std::unique_lock lock(mutex);
      cv.wait(lock, [&] { return stopping || !queue.empty(); });
      // A cycle starts T after the oldest entry arrived, or once B bytes wait, or at once for an
      // operation whose caller waits for it (a blocking call of a Communicator).
      while (!stopping && !start_now && queued_bytes < options.buffer_bytes) {
        const auto due = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(oldest_ns + cycle_ns));
        if (cv.wait_until(lock, due) == std::cv_status::timeout) break;
      }
      local_n = static_cast<std::int64_t>(queue.size());
      submitted = static_cast<std::int64_t>(stats.ops);
      start_now = false;
      local_stop = stopping;
    }
    // How many operations every rank has (the minimum), and whether all ranks are stopping.
    const CycleCounts counts = exchange_counts(control_comm, local_n, submitted, local_stop);
    const std::int64_t k = counts.queued;
    batch.clear();
    if (k == 0 && local_n > 0 && counts.any_stop) {
      fail_unmatched(counts, submitted);  // some rank stopped with nothing queued: never matched
      continue;
    }
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
      std::int64_t lo_minus_hi[2] = {h, -h};
      fusion_detail::least_over_ranks(control_comm, lo_minus_hi, 2);
      if (lo_minus_hi[0] != -lo_minus_hi[1]) {
        const FusedOp& first = batch.front();
        const auto error = std::make_exception_ptr(InputError(
            fmt::format("fused {} on rank {}", to_string(first.op), world_rank),
            fmt::format(
                "the ranks submitted different operations to the fusion (the {} operations of cycle {}, the first "
                "here a {} of {} elements of {}): every rank must submit the same operations in the same order",
                k, stats.cycles, to_string(first.op), first.count, to_string(first.dtype))));
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
    if (k == 0 && counts.all_stop) break;
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
        fmt::format("fusion on rank {}", world_rank),
        fmt::format("{} operation(s) submitted on this rank were not submitted on every rank before the fusion stopped",
                    left.size())));
    for (auto& p : left) p.state->complete(error);
  }
  idle_cv.notify_all();
}

std::uint64_t Fusion::Impl::submitted_count() const {
  std::lock_guard lock(mutex);
  return stats.ops;
}

// Fails every operation queued here: some rank stopped its fusion with nothing queued, so it will
// never match them (the ranks submitted different numbers of operations). The fusion is then
// unusable. (A rank that neither stops nor submits leaves this one waiting in the cycle's
// agreement, which times out like any call: run().)
void Fusion::Impl::fail_unmatched(const CycleCounts& counts, std::int64_t submitted_here) {
  std::deque<FusedOp> left;
  {
    std::lock_guard lock(mutex);
    left.swap(queue);
    queued_bytes = 0;
  }
  const auto error = std::make_exception_ptr(InputError(
      fmt::format("fusion on rank {}", world_rank),
      fmt::format("{} fused operation(s) submitted on this rank ({} in all; the first waiting {}) were not submitted "
                  "on every rank: some rank stopped its fusion after {}",
                  left.size(), submitted_here, describe_first(left.front()), counts.submitted_min)));
  {
    std::lock_guard lock(mutex);
    broken = error;
  }
  for (auto& p : left) p.state->complete(error);
  idle_cv.notify_all();
}

// Every rank's largest block of each uneven all-to-all in the batch (the batch is the same on
// every rank: same signature), so that every rank packs them alike; one that moves nothing on
// any rank completes here.
void Fusion::Impl::agree_uneven_blocks() {
  std::vector<std::int64_t> largest;
  for (const auto& p : batch)
    if (p.op == CollectiveKind::kAllToAllv) largest.push_back(static_cast<std::int64_t>(p.count));
  if (largest.empty()) return;
  control_comm.issue(calls::all_reduce(largest.data(), largest.data(), largest.size(), DType::i64, ReduceOp::max));
  std::size_t next = 0, kept = 0;
  for (auto& p : batch) {
    if (p.op == CollectiveKind::kAllToAllv) {
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

}  // namespace chorus::rt
