#pragma once
// One ordered queue and one progress thread per backend. Operations on a backend run in the
// order they were issued (all ranks issue the same order per backend), so no cross-backend
// ordering exists and waiting on one backend never blocks another.
//
// A synchronous call on an idle backend skips the thread hop: it claims the backend with one
// atomic compare-and-swap, runs on the calling thread and releases it — no lock and no wake-up
// unless a task was queued meanwhile or someone drains.
#include <atomic>
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
  bool try_claim();
  void release();
  // Runs the oldest queued task on the calling thread if the backend is idle ("help while
  // waiting": a thread waiting for an operation runs it, and what precedes it, itself instead
  // of paying two thread wake-ups). False if nothing ran.
  bool run_front_inline();
  // Blocks until every task posted so far has finished.
  void drain();
  // Stops the thread after the queue is empty. If `abandon`, a thread stuck in a broken
  // backend is detached instead of joined.
  void stop(bool abandon);

 private:
  void loop();
  void notify_after_release();
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
