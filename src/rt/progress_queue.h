#pragma once
// One ordered queue and one progress thread per backend. Operations on a backend run in the
// order they were issued (all ranks issue the same order per backend), so no cross-backend
// ordering exists and waiting on one backend never blocks another.
//
// A synchronous call on an idle backend skips the thread hop: it claims the backend with one
// atomic compare-and-swap, runs on the calling thread and releases it — no lock and no wake-up
// unless a task was queued meanwhile or someone drains.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace chorus::rt {

class ProgressQueue {
 public:
  using Task = std::function<void()>;
  explicit ProgressQueue(std::string name);
  ~ProgressQueue();
  ProgressQueue(const ProgressQueue&) = delete;
  ProgressQueue& operator=(const ProgressQueue&) = delete;

  void post(Task task);
  // Claims the backend for the calling thread if nothing is queued or running; the caller then
  // runs its operation itself and calls release(). False if busy: post() instead.
  // Inline: this pair is the whole cost of the queue on a synchronous call. Locked instructions
  // cost 5-20 ns each on the CI machine (a KVM guest; bench_rt_overhead prints it), so the pair
  // has exactly one: the compare-and-swap that gives mutual exclusion.
  [[gnu::always_inline]] bool try_claim() {
    // Nothing queued: a synchronous call must not overtake operations issued before it.
    if (queued_.load(std::memory_order_acquire) != 0 || stopping_.load(std::memory_order_relaxed)) return false;
    bool expected = false;
    // Acquire: everything the previous owner did to the backend happens before our operation.
    return busy_.compare_exchange_strong(expected, true, std::memory_order_acquire, std::memory_order_relaxed);
  }
  // Why a plain release store is enough here (no locked instruction):
  //  - Mutual exclusion and the hand-over of the backend's state rest on busy_ alone: every
  //    claim is a compare-and-swap (an RMW reads the latest value in busy_'s modification
  //    order), and this release store synchronises with the acquire of the next successful
  //    claim (try_claim, run_front_inline, the progress thread).
  //  - Wake-ups: the loads of queued_ / drainers_ below may be satisfied before the store is
  //    visible (store->load reordering, allowed without seq_cst), so a task posted or a drain()
  //    begun at that moment may not be notified here, while the progress thread / drainer
  //    still read busy_ == true. Therefore nobody sleeps unboundedly on busy_: the progress
  //    thread and drain() re-check busy_ at least every kBusyRecheck while they wait for it
  //    (see loop() and drain()); the store becomes visible in finite time ([intro.progress],
  //    and on x86 the store buffer drains within nanoseconds), so the lost notification costs
  //    at most one re-check period in that rare race, never a hang. In the common case the
  //    notification below wakes them at once.
  [[gnu::always_inline]] void release() {
    busy_.store(false, std::memory_order_release);
    if (queued_.load(std::memory_order_relaxed) != 0 || drainers_.load(std::memory_order_relaxed) != 0)
      notify_after_release();
  }
  // Runs the oldest queued task on the calling thread if the backend is idle ("help while
  // waiting": a thread waiting for an operation runs it, and what precedes it, itself instead
  // of paying two thread wake-ups). False if nothing ran.
  bool run_front_inline();
  // Blocks until every task posted so far has finished.
  void drain();
  // Stops the thread after the queue is empty. If `abandon`, a thread stuck in a broken
  // backend is detached instead of joined.
  void stop(bool abandon);
  // True while an operation runs on the backend: a queued one on the progress thread, or an
  // inline one (a synchronous call, or a waiter helping) on any other thread.
  bool busy() const { return busy_.load(std::memory_order_seq_cst); }
  // Waits until nothing is queued and nothing runs (on the progress thread, or inline on any
  // other thread), or `deadline` passes; returns whether that holds. Used by finalize(): queued
  // and running operations run to their end, and no backend is destroyed under one.
  bool wait_until_idle(std::chrono::steady_clock::time_point deadline) const;

 private:
  void loop();
  void notify_after_release();
  // How often a thread waiting for busy_ to clear re-checks it (see release()).
  static constexpr std::chrono::microseconds kBusyRecheck{500};
  std::string name_;
  std::mutex mutex_;
  std::condition_variable work_cv_;  // the progress thread waits here for tasks
  std::condition_variable idle_cv_;  // drain() waits here for the queue to empty
  std::deque<Task> tasks_;           // guarded by mutex_
  std::atomic<int> queued_{0};       // tasks_.size(), readable without the lock
  std::atomic<bool> busy_{false};    // a task (queued or inline) is running
  std::atomic<int> drainers_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace chorus::rt
