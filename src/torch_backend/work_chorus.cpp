#include "torch_backend/work_chorus.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace chorus::torch_backend {

// ---- StagingPool ---------------------------------------------------------------------------------

at::Tensor StagingPool::take(std::int64_t numel, at::ScalarType dtype) {
  const std::int64_t bytes = std::max<std::int64_t>(numel * static_cast<std::int64_t>(c10::elementSize(dtype)), 1);
  at::Tensor buffer;
  {
    std::lock_guard lock(mutex_);
    // The smallest free buffer that fits and is at most 4x too big.
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->numel() >= bytes && it->numel() <= 4 * bytes && (best == free_.end() || it->numel() < best->numel()))
        best = it;
    if (best != free_.end()) {
      buffer = *best;
      free_.erase(best);
    }
  }
  if (!buffer.defined()) buffer = at::empty({bytes}, at::TensorOptions().dtype(at::kByte));
  return buffer.narrow(0, 0, numel * static_cast<std::int64_t>(c10::elementSize(dtype))).view(dtype);
}

void StagingPool::give(const at::Tensor& buffer) {
  // The whole storage, as a uint8 tensor, whatever view of it came back.
  const auto& storage = buffer.storage();
  at::Tensor bytes = at::empty({0}, at::TensorOptions().dtype(at::kByte))
                         .set_(storage, 0, {static_cast<std::int64_t>(storage.nbytes())}, {1});
  if (storage.nbytes() > kMaxBytes) return;  // too big to keep: freed with its last user
  std::lock_guard lock(mutex_);
  free_.push_back(std::move(bytes));
  // Over a limit: the oldest buffers go first (sizes in use change over a run; the newest match).
  std::size_t held = 0;
  for (const auto& b : free_) held += static_cast<std::size_t>(b.numel());
  while (free_.size() > kMaxBuffers || held > kMaxBytes) {
    held -= static_cast<std::size_t>(free_.front().numel());
    free_.erase(free_.begin());
  }
}

// ---- WorkChorus ----------------------------------------------------------------------------------

WorkChorus::WorkChorus(int rank, c10d::OpType type, const char* title, rt::Work work, std::vector<at::Tensor> keep,
                       std::vector<at::Tensor> outputs, std::function<void()> finish_fn)
    : c10d::Work(rank, type, title),
      work_(std::move(work)),
      keep_(std::move(keep)),
      outputs_(std::move(outputs)),
      finish_fn_(std::move(finish_fn)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {}

c10::intrusive_ptr<WorkChorus> WorkChorus::make(int rank, c10d::OpType type, const char* title, rt::Work work,
                                                std::vector<at::Tensor> keep, std::vector<at::Tensor> outputs,
                                                std::function<void()> finish_fn, std::shared_ptr<StagingPool> pool,
                                                std::vector<at::Tensor> staging) {
  auto w = c10::make_intrusive<WorkChorus>(rank, type, title, work, std::move(keep), std::move(outputs),
                                           std::move(finish_fn));
  w->pool_ = std::move(pool);
  w->staging_ = std::move(staging);
  // The callback holds the work (and so its tensors) until the operation has ended.
  work.on_complete([w](std::exception_ptr error) { w->on_done(std::move(error)); });
  return w;
}

void WorkChorus::on_done(std::exception_ptr error) {
  if (!error && finish_fn_) {
    try {
      finish_fn_();
    } catch (...) {
      error = std::current_exception();
    }
  }
  if (pool_ != nullptr)
    for (const auto& b : staging_) pool_->give(b);
  finish(error);
  if (error)
    future_->setError(error);
  else
    future_->markCompleted(c10::IValue(outputs_));
}

bool WorkChorus::wait(std::chrono::milliseconds timeout) {
  // Waiting on the runtime's handle lets this thread run the operation itself when its backend
  // is idle (the runtime's fast path); its error, if any, is the work's, rethrown below.
  if (timeout == ::kNoTimeout) {
    try {
      work_.wait();
    } catch (...) {
    }
  }
  return c10d::Work::wait(timeout);
}
}  // namespace chorus::torch_backend
