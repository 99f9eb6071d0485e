#include "rt/progress_queue.h"

#include <pthread.h>
#include <sched.h>

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
  }
  work_cv_.notify_one();
}

bool ProgressQueue::try_claim() {
  std::lock_guard lock(mutex_);
  if (running_ || !tasks_.empty() || stopping_) return false;
  running_ = true;
  return true;
}

void ProgressQueue::release() {
  // The synchronous fast path: wake nobody unless someone waits (a wake-up costs a context
  // switch, which is more than a small MPI_Allreduce).
  bool wake_worker, wake_drainers;
  {
    std::lock_guard lock(mutex_);
    running_ = false;
    wake_worker = !tasks_.empty();
    wake_drainers = drainers_ > 0;
  }
  if (wake_worker) work_cv_.notify_one();
  if (wake_drainers) idle_cv_.notify_all();
}

void ProgressQueue::drain() {
  std::unique_lock lock(mutex_);
  ++drainers_;
  idle_cv_.wait(lock, [&] { return tasks_.empty() && !running_; });
  --drainers_;
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
    work_cv_.wait(lock, [&] { return (!tasks_.empty() && !running_) || (stopping_ && tasks_.empty()); });
    if (tasks_.empty()) return;  // stopping
    Task task = std::move(tasks_.front());
    tasks_.pop_front();
    running_ = true;
    lock.unlock();
    task();
    lock.lock();
    running_ = false;
    if (drainers_ > 0) idle_cv_.notify_all();
  }
}

}  // namespace chorus::rt
