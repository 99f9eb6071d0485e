#include "rt/work.h"

#include <fmt/format.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>

#include "rt/errors.h"
#include "rt/progress_queue.h"
#include "rt/runtime_config.h"

namespace chorus::rt {

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void WorkState::complete(std::exception_ptr error) {
  std::vector<std::function<void(std::exception_ptr)>> callbacks;
  {
    std::lock_guard lock(mutex_);
    done_ = true;
    error_ = error;
    done_flag_.store(true, std::memory_order_release);
    callbacks.swap(callbacks_);
  }
  done_cv_.notify_all();
  for (auto& callback : callbacks) {
    try {
      callback(error);
    } catch (...) {  // documented: a callback must not throw; the operation's own result stands
    }
  }
}

void WorkState::on_complete(std::function<void(std::exception_ptr)> callback) {
  std::exception_ptr error;
  {
    std::lock_guard lock(mutex_);
    if (!done_) {
      callbacks_.push_back(std::move(callback));
      return;
    }
    error = error_;
  }
  try {
    callback(error);
  } catch (...) {
  }
}

void Work::on_complete(std::function<void(std::exception_ptr)> callback) const {
  if (!state_) {
    try {
      callback(nullptr);
    } catch (...) {
    }
    return;
  }
  state_->on_complete(std::move(callback));
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
  // The operation ends by itself: every backend enforces the operation timeout inside the
  // operation (and checks that its peers are alive), so a failed operation completes with its
  // CommError / TimeoutError once the backend has let go of the user's buffers. wait() therefore
  // never gives up on a running operation — throwing while the backend may still write the
  // buffer would hand the caller a buffer it must not free.
  //
  // Last resort, for a backend that breaks that contract (a bug, or a library call that ignores
  // its timeout): if the lane's current operation runs far beyond the timeout, there is no safe
  // way to return, so the process ends with a message (as Open MPI's own watchdog would).
  std::unique_lock lock(state_->mutex_);
  while (!state_->done_) {
    state_->done_cv_.wait_for(lock, std::chrono::milliseconds(50));
    if (state_->done_ || !state_->activity_) continue;
    const std::int64_t timeout_ms = state_->activity_->timeout_ms;
    const std::int64_t last_resort_ns = (2 * timeout_ms + kLastResortGraceMs) * 1000000;
    const std::int64_t since = state_->activity_->running_since_ns.load();
    if (since != 0 && steady_now_ns() - since > last_resort_ns) {
      std::fprintf(stderr,
                   "chorus rt: %s: backend %s has been inside one operation for more than %lld ms "
                   "(twice the operation timeout of %lld ms plus %lld ms) without ending it; the "
                   "operation may still write its buffers, so the process cannot continue safely "
                   "and exits with status 3\n",
                   state_->description_.c_str(), state_->activity_->backend.c_str(),
                   static_cast<long long>(last_resort_ns / 1000000), static_cast<long long>(timeout_ms),
                   static_cast<long long>(kLastResortGraceMs));
      std::fflush(stderr);
      std::_Exit(3);
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
