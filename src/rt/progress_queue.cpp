#include "rt/progress_queue.h"

#include <pthread.h>

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
  cv_.notify_all();
}

bool ProgressQueue::try_claim() {
  std::lock_guard lock(mutex_);
  if (running_ || !tasks_.empty() || stopping_) return false;
  running_ = true;
  return true;
}

void ProgressQueue::release() {
  {
    std::lock_guard lock(mutex_);
    running_ = false;
  }
  cv_.notify_all();
}

void ProgressQueue::drain() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [&] { return tasks_.empty() && !running_; });
}

void ProgressQueue::stop(bool abandon) {
  {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (abandon)
    thread_.detach();
  else
    thread_.join();
}

void ProgressQueue::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return (!tasks_.empty() && !running_) || (stopping_ && tasks_.empty()); });
    if (tasks_.empty()) return;  // stopping
    Task task = std::move(tasks_.front());
    tasks_.pop_front();
    running_ = true;
    lock.unlock();
    task();
    lock.lock();
    running_ = false;
    cv_.notify_all();
  }
}

}  // namespace chorus::rt
