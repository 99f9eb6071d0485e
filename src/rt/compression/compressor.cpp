#include "rt/compression/compressor.h"

#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "rt/runtime.h"

namespace chorus::rt::compressed {

namespace {
std::atomic<int> g_compressors{0};  // names each Compressor's group (the same count on every rank)
}  // namespace

struct Compressor::Impl {
  std::string group;
  mutable std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::function<void()>> tasks;
  bool stopping = false;
  Stats totals;
  std::thread worker;

  Work submit(std::string what, std::function<void(const std::string&, Stats*)> call, Stats* caller_stats) {
    auto state = std::make_shared<WorkState>(std::move(what), nullptr);
    Work work(state);
    {
      std::lock_guard lock(mutex);
      if (stopping) throw std::logic_error(state->description() + " after the Compressor began to stop");
      tasks.push_back([this, state, call = std::move(call), caller_stats] {
        Stats st;
        std::exception_ptr error;
        try {
          call(group, &st);
        } catch (...) {
          error = std::current_exception();
        }
        {
          std::lock_guard totals_lock(mutex);
          totals.raw_bytes += st.raw_bytes;
          totals.wire_bytes += st.wire_bytes;
        }
        if (caller_stats != nullptr) {
          caller_stats->raw_bytes += st.raw_bytes;
          caller_stats->wire_bytes += st.wire_bytes;
        }
        state->complete(error);
      });
    }
    cv.notify_one();
    return work;
  }

  void work_loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return stopping || !tasks.empty(); });
        if (tasks.empty()) return;  // stopping, and everything queued has run
        task = std::move(tasks.front());
        tasks.pop_front();
      }
      task();
    }
  }
};

Compressor::Compressor(std::string_view backend) : impl_(std::make_unique<Impl>()) {
  if (backend == "auto")
    throw InputError("Compressor", "give an initialised backend, not auto (a Compressor's operations run on one group)");
  impl_->group = fmt::format("chorus-compressor{}/{}", g_compressors.fetch_add(1), backend);
  rt::split(impl_->group, backend, 0, rt::rank(backend));
  impl_->worker = std::thread([im = impl_.get()] { im->work_loop(); });
}

Compressor::~Compressor() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  if (impl_->worker.joinable()) impl_->worker.join();
}

Work Compressor::all_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                            const ErrorBound& bound, Stats* stats) {
  return run("compressed all_reduce", [=](const std::string& g, Stats* st) {
    compressed::all_reduce(g, in, out, count, dtype, op, bound, st);
  }, stats);
}

Work Compressor::all_gather(const void* in, void* out, std::size_t count, DType dtype, const ErrorBound& bound,
                            Stats* stats) {
  return run("compressed all_gather", [=](const std::string& g, Stats* st) {
    compressed::all_gather(g, in, out, count, dtype, bound, st);
  }, stats);
}

Work Compressor::all_to_all_single(const void* in, void* out, std::size_t count, DType dtype, const ErrorBound& bound,
                                   Stats* stats) {
  return run("compressed all_to_all_single", [=](const std::string& g, Stats* st) {
    compressed::all_to_all_single(g, in, out, count, dtype, bound, st);
  }, stats);
}

Work Compressor::run(std::string what, std::function<void(const std::string&, Stats*)> call, Stats* stats) {
  return impl_->submit(std::move(what), std::move(call), stats);
}

Stats Compressor::stats() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->totals;
}

const std::string& Compressor::group() const { return impl_->group; }

}  // namespace chorus::rt::compressed
