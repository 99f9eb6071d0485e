#include "rt/work.h"

#include <fmt/format.h>
#include <sched.h>

#include "rt/errors.h"
#include "rt/progress_queue.h"
#include "rt/runtime_config.h"

namespace chorus::rt {

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void WorkState::complete(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
    error_ = std::move(error);
    done_flag_.store(true, std::memory_order_release);
  }
  done_cv_.notify_all();
}

bool Work::test() const {
  if (!state_) return true;
  std::lock_guard lock(state_->mutex_);
  if (state_->done_ && state_->error_) std::rethrow_exception(state_->error_);
  return state_->done_;
}

void Work::wait() const {
  if (!state_) return;
  // Operations often finish within microseconds: yield a little before sleeping, which lets
  // the progress thread run on this core without paying two futex wake-ups.
  for (int i = 0; i < 64; ++i) {
    if (state_->done_flag_.load(std::memory_order_acquire)) break;
    // Help: run queued operations of this lane (in order, up to ours) on this thread.
    if (state_->queue_ != nullptr && state_->queue_->run_front_inline()) {
      i = 0;
      continue;
    }
    sched_yield();
  }
  const std::int64_t timeout_ms = operation_timeout_ms();
  std::unique_lock lock(state_->mutex_);
  while (!state_->done_) {
    state_->done_cv_.wait_for(lock, std::chrono::milliseconds(50));
    if (state_->done_ || !state_->activity_) break;
    const std::int64_t since = state_->activity_->running_since_ns.load();
    if (since != 0 && steady_now_ns() - since > timeout_ms * 1000000) {
      throw TimeoutError(fmt::format(
          "{}: backend {} has been stuck in an operation for more than {} ms (operation "
          "timeout; a peer may have died or the ranks disagree on the call)",
          state_->description_, state_->activity_->backend, timeout_ms));
    }
  }
  if (state_->error_) std::rethrow_exception(state_->error_);
}

bool Work::wait_for(std::chrono::milliseconds timeout) const {
  if (!state_) return true;
  std::unique_lock lock(state_->mutex_);
  if (!state_->done_cv_.wait_for(lock, timeout, [&] { return state_->done_; })) return false;
  if (state_->error_) std::rethrow_exception(state_->error_);
  return true;
}

const std::string& Work::description() const {
  static const std::string kCompleted = "completed operation";
  return state_ ? state_->description_ : kCompleted;
}

}  // namespace chorus::rt
