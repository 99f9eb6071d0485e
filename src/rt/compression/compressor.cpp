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
  // A worker thread and its queue: collectives on one, sends on another, receives on a third,
  // as the runtime's own lanes (so a queued send never waits behind a receive or a collective).
  struct Lane {
    std::deque<std::function<void()>> tasks;
    std::condition_variable cv;
    std::thread thread;  // started by the lane's first call
  };
  std::string group;
  mutable std::mutex mutex;
  Lane lanes[3];
  bool stopping = false;
  Stats totals;

  Work submit(std::string what, std::function<void(const std::string&, Stats*)> call, Stats* caller_stats,
              LaneKind kind) {
    auto state = std::make_shared<WorkState>(std::move(what), nullptr);
    Work work(state);
    Lane& lane = lanes[static_cast<int>(kind)];
    {
      std::lock_guard lock(mutex);
      if (stopping) throw std::logic_error(state->description() + " after the Compressor began to stop");
      lane.tasks.push_back([this, state, call = std::move(call), caller_stats] {
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
          if (caller_stats != nullptr) {
            caller_stats->raw_bytes += st.raw_bytes;
            caller_stats->wire_bytes += st.wire_bytes;
          }
        }
        state->complete(error);
      });
      if (!lane.thread.joinable()) lane.thread = std::thread([this, &lane] { work_loop(lane); });
    }
    lane.cv.notify_one();
    return work;
  }

  void work_loop(Lane& lane) {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex);
        lane.cv.wait(lock, [&] { return stopping || !lane.tasks.empty(); });
        if (lane.tasks.empty()) return;  // stopping, and everything queued has run
        task = std::move(lane.tasks.front());
        lane.tasks.pop_front();
      }
      task();
    }
  }
};

Compressor::Compressor(std::string_view backend) : impl_(std::make_unique<Impl>()) {
  if (backend == "auto")
    throw InputError("Compressor",
                     "give an initialised backend, not auto (a Compressor's operations run on one group)");
  impl_->group = fmt::format("chorus-compressor{}/{}", g_compressors.fetch_add(1), backend);
  rt::split(impl_->group, backend, 0, rt::rank(backend));
}

Compressor::~Compressor() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  for (auto& lane : impl_->lanes) {
    lane.cv.notify_all();
    if (lane.thread.joinable()) lane.thread.join();
  }
}

Work Compressor::all_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                            const ErrorBound& bound, Stats* stats) {
  return run(
      "compressed all_reduce",
      [=](const std::string& g, Stats* st) { compressed::all_reduce(g, in, out, count, dtype, op, bound, st); }, stats);
}

Work Compressor::all_gather(const void* in, void* out, std::size_t count, DType dtype, const ErrorBound& bound,
                            Stats* stats) {
  return run(
      "compressed all_gather",
      [=](const std::string& g, Stats* st) { compressed::all_gather(g, in, out, count, dtype, bound, st); }, stats);
}

Work Compressor::all_to_all_single(const void* in, void* out, std::size_t count, DType dtype, const ErrorBound& bound,
                                   Stats* stats) {
  return run(
      "compressed all_to_all_single",
      [=](const std::string& g, Stats* st) { compressed::all_to_all_single(g, in, out, count, dtype, bound, st); },
      stats);
}

Work Compressor::send(const void* buf, std::size_t count, DType dtype, int dst, const ErrorBound& bound, Stats* stats) {
  return run(
      "compressed send",
      [=](const std::string& g, Stats* st) { compressed::send(g, buf, count, dtype, dst, bound, st); }, stats,
      LaneKind::kSend);
}

Work Compressor::recv(void* buf, std::size_t count, DType dtype, int src, const ErrorBound& bound, Stats* stats) {
  return run(
      "compressed recv",
      [=](const std::string& g, Stats* st) { compressed::recv(g, buf, count, dtype, src, bound, st); }, stats,
      LaneKind::kRecv);
}

Work Compressor::run(std::string what, std::function<void(const std::string&, Stats*)> call, Stats* stats,
                     LaneKind lane) {
  return impl_->submit(std::move(what), std::move(call), stats, lane);
}

Stats Compressor::stats() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->totals;
}

const std::string& Compressor::group() const { return impl_->group; }

}  // namespace chorus::rt::compressed
