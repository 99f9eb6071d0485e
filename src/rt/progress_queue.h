#pragma once
// One ordered queue and one progress thread per backend. Operations on a backend run in the
// order they were issued (all ranks issue the same order per backend), so no cross-backend
// ordering exists and waiting on one backend never blocks another.
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
  // Claims the backend for the calling thread if nothing is queued or running (the
  // synchronous fast path: the caller runs its operation itself, then calls release());
  // returns false if the backend is busy, and then the caller must post() instead.
  bool try_claim();
  void release();
  // Blocks until every task posted so far has finished.
  void drain();
  // Stops the thread after the queue is empty. If `abandon`, a thread stuck in a broken
  // backend is detached instead of joined.
  void stop(bool abandon);

 private:
  void loop();
  std::string name_;
  std::mutex mutex_;
  std::condition_variable work_cv_;  // the progress thread waits here for tasks
  std::condition_variable idle_cv_;  // drain() waits here for the queue to empty
  int drainers_ = 0;
  std::deque<Task> tasks_;
  bool running_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace chorus::rt
