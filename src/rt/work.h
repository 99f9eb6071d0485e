#pragma once
// Work handles: the result of every runtime operation. An operation runs on its backend's
// progress thread (or inline, for a synchronous call on an idle backend); the handle tells
// when it has finished and carries its error, if any.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace chorus::rt {

// What a backend's progress thread is doing: since when its current operation runs
// (0 when idle). Waiters use it for the last-resort watchdog of Work::wait().
struct BackendActivity {
  std::string backend;
  std::atomic<std::int64_t> running_since_ns{0};
  std::int64_t timeout_ms = 300000;  // its runtime's operation timeout (Work::wait's last resort)
};

std::int64_t steady_now_ns();

class ProgressQueue;

class WorkState {
 public:
  // `queue`: the lane the operation is queued on; a waiter may run queued operations itself.
  WorkState(std::string description, std::shared_ptr<BackendActivity> activity, ProgressQueue* queue = nullptr)
      : description_(std::move(description)), activity_(std::move(activity)), queue_(queue) {}
  void complete(std::exception_ptr error);  // error == nullptr: success
  // Runs `callback(error)` once the operation has completed: at once on this thread if it has,
  // else on the thread that completes it, right after waiters are woken. Callbacks run in the
  // order they were added; they must be short and must not throw (what they throw is dropped).
  void on_complete(std::function<void(std::exception_ptr)> callback);
  const std::string& description() const { return description_; }

 private:
  friend class Work;
  std::string description_;
  std::shared_ptr<BackendActivity> activity_;
  ProgressQueue* queue_;
  std::mutex mutex_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::atomic<bool> done_flag_{false};  // done_, readable without the mutex
  std::exception_ptr error_;
  std::vector<std::function<void(std::exception_ptr)>> callbacks_;  // guarded by mutex_
};

class Work {
 public:
  Work() = default;  // an already completed operation
  explicit Work(std::shared_ptr<WorkState> state) : state_(std::move(state)) {}

  // True once the operation finished; rethrows its error if it failed.
  bool test() const;
  // Blocks until the operation finished and rethrows its error (CommError, TimeoutError, ...).
  // Returns or throws only once the operation has ended: every backend bounds its operations
  // by the operation timeout itself, so after wait() the buffers are the caller's again, even
  // after a failure. Last resort: an operation still running 2 x timeout + kLastResortGraceMs
  // after it started ends the process (exit status 3) with a message, never a throw.
  void wait() const;
  static constexpr std::int64_t kLastResortGraceMs = 10000;
  // Blocks at most `timeout`; returns false if the operation is still in flight.
  bool wait_for(std::chrono::milliseconds timeout) const;
  const std::string& description() const;
  // See WorkState::on_complete; an already completed Work (no state) runs it at once.
  void on_complete(std::function<void(std::exception_ptr)> callback) const;

 private:
  std::shared_ptr<WorkState> state_;
};

}  // namespace chorus::rt
