// The mpi backend's watchdog: a blocked MPI collective cannot be abandoned safely, so a thread
// watches the operation counters (Guard, collectives.cpp) and aborts the job with a clear message
// when something in flight has neither started nor finished for the whole operation timeout, or
// at once when something is in flight after rt::abort (interrupt()).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>

#include "rt/backends/mpi/mpi_backend.h"
#include "rt/runtime_config.h"

namespace chorus::rt::mpi_backend {

std::int64_t MpiBackend::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void MpiBackend::interrupt(const std::string& why) {
  {
    std::lock_guard lock(watch_mutex_);
    interrupted_ = why;
  }
  watch_cv_.notify_all();
}

void MpiBackend::watch() {
  std::unique_lock lock(watch_mutex_);
  std::uint64_t seen_started = 0, seen_finished = 0;
  std::int64_t seen_since = now_ns();
  bool said = false;  // the stuck operation's wait was announced
  const std::int64_t say_after_ns = wait_report_after(timeout_).count() * std::int64_t{1000000};
  while (!stop_) {
    watch_cv_.wait_for(lock, std::chrono::milliseconds(100));
    std::uint64_t f = 0, s = 0;
    for (const auto& c : counters_) {
      f += c.finished.load(std::memory_order_relaxed);
      s += c.started.load(std::memory_order_relaxed);
    }
    if (!interrupted_.empty() && s != f) {
      // Aborted with an operation in flight (or one that got past the refusal as the abort
      // came): only the job's end ends it. The runtime has written the flight record.
      std::fprintf(stderr, "chorus rt: mpi %s on rank %d was in flight when the rank aborted (%s); aborting the job\n",
                   current_op_.load(), rank_, interrupted_.c_str());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    // Stuck: something is in flight and nothing started or finished for the whole timeout.
    if (s == f || s != seen_started || f != seen_finished) {
      seen_started = s;
      seen_finished = f;
      seen_since = now_ns();
      said = false;
      continue;
    }
    // One line when the wait starts to matter (as finalize's and shm's), one when it gives up.
    const std::int64_t waited_ns = now_ns() - seen_since;
    if (!said && waited_ns >= say_after_ns) {
      said = true;
      std::fprintf(stderr, "chorus rt: mpi %s: rank %d waiting (%.0f s so far; gives up in %.0f s)\n",
                   current_op_.load(), rank_, static_cast<double>(waited_ns) / 1e9,
                   static_cast<double>(timeout_.count() * 1000000 - waited_ns) / 1e9);
    }
    if (waited_ns > timeout_.count() * 1000000) {
      const std::string what =
          fmt::format("mpi {} on rank {} did not complete within {} ms (a peer died or the ranks disagree on the call)",
                      current_op_.load(), rank_, timeout_.count());
      std::fprintf(stderr, "chorus rt: %s; aborting the job\n", what.c_str());
      std::fflush(stderr);
      if (before_abort_) before_abort_(what);  // the flight record, while the job still stands
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
}

}  // namespace chorus::rt::mpi_backend
