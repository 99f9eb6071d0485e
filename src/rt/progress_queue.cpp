#include "rt/progress_queue.h"

#include <pthread.h>
#include <sched.h>

#include <thread>

namespace chorus::rt {

ProgressQueue::ProgressQueue(std::string name) : name_(std::move(name)) {
  thread_ = std::thread([this] { loop(); });
  const std::string thread_name = ("rt-" + name_).substr(0, 15);
  pthread_setname_np(thread_.native_handle(), thread_name.c_str());
}

ProgressQueue::~ProgressQueue() { stop(false); }

void ProgressQueue::post(Task task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
    queued_.fetch_add(1, std::memory_order_seq_cst);
  }
  work_cv_.notify_one();
}

// Wakes the progress thread if a task waits for the backend, and drainers if any. Taking the
// mutex first guarantees a thread that just checked its condition is already waiting.
void ProgressQueue::notify_after_release() {
  const bool wake_worker = queued_.load(std::memory_order_seq_cst) != 0;
  const bool wake_drainers = drainers_.load(std::memory_order_seq_cst) != 0;
  if (!wake_worker && !wake_drainers) return;
  { std::lock_guard lock(mutex_); }
  if (wake_worker) work_cv_.notify_one();
  if (wake_drainers) idle_cv_.notify_all();
}

bool ProgressQueue::run_front_inline() {
  if (queued_.load(std::memory_order_seq_cst) == 0 || busy_.load(std::memory_order_seq_cst)) return false;
  Task task;
  {
    std::lock_guard lock(mutex_);
    if (tasks_.empty()) return false;
    bool expected = false;
    if (!busy_.compare_exchange_strong(expected, true, std::memory_order_seq_cst)) return false;
    task = std::move(tasks_.front());
    tasks_.pop_front();
    queued_.fetch_sub(1, std::memory_order_seq_cst);
  }
  task();
  busy_.store(false, std::memory_order_seq_cst);
  notify_after_release();
  return true;
}

void ProgressQueue::drain() {
  std::unique_lock lock(mutex_);
  drainers_.fetch_add(1, std::memory_order_seq_cst);
  // Bounded waits: release() (the inline path) may miss this drainer (see there).
  while (!(tasks_.empty() && !busy_.load(std::memory_order_seq_cst))) idle_cv_.wait_for(lock, kBusyRecheck);
  drainers_.fetch_sub(1, std::memory_order_seq_cst);
}

void ProgressQueue::stop(bool abandon) {
  {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) return;
    stopping_ = true;
  }
  work_cv_.notify_all();
  if (abandon)
    thread_.detach();
  else
    thread_.join();
}

bool ProgressQueue::wait_until_idle(std::chrono::steady_clock::time_point deadline) const {
  // Polled: release() notifies nobody when no task is queued (see there), and this runs once
  // per backend at finalize(). The progress thread claims busy_ before it takes a task off the
  // queue, so a task is always counted in queued_ or busy_ (loaded in that order).
  while (queued_.load(std::memory_order_seq_cst) != 0 || busy()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

void ProgressQueue::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    // Back-to-back operations are common: look for the next one a few times (yielding the
    // core) before sleeping on the condition variable.
    for (int i = 0; i < 32 && tasks_.empty() && !stopping_; ++i) {
      lock.unlock();
      sched_yield();
      lock.lock();
    }
    for (;;) {
      if (tasks_.empty()) {
        if (stopping_) break;
        work_cv_.wait(lock);  // post() and stop() notify under the usual mutex protocol
      } else if (busy_.load(std::memory_order_seq_cst)) {
        // A caller runs an operation inline (or helps while waiting). Its release() may miss
        // our task (see there), so re-check busy_ periodically instead of sleeping for good.
        work_cv_.wait_for(lock, kBusyRecheck);
      } else {
        break;
      }
    }
    if (tasks_.empty()) return;  // stopping
    bool expected = false;
    if (!busy_.compare_exchange_strong(expected, true, std::memory_order_seq_cst)) continue;  // inline call won
    Task task = std::move(tasks_.front());
    tasks_.pop_front();
    queued_.fetch_sub(1, std::memory_order_seq_cst);
    lock.unlock();
    task();
    busy_.store(false, std::memory_order_seq_cst);
    if (drainers_.load(std::memory_order_seq_cst) != 0) {
      lock.lock();
      idle_cv_.notify_all();
      continue;
    }
    lock.lock();
  }
}

}  // namespace chorus::rt
