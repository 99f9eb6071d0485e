#include "torch_backend/work_chorus.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace chorus::torch_backend {

// ---- StagingPool ---------------------------------------------------------------------------------

at::Tensor StagingPool::take(std::int64_t numel, at::ScalarType dtype) {
  rt::BufferPool::Buffer buffer = pool_->take(static_cast<std::size_t>(numel) * c10::elementSize(dtype));
  const rt::BufferPool::Return give_back = buffer.get_deleter();
  return at::from_blob(
      buffer.release(), {numel}, [give_back](void* p) { give_back(static_cast<std::byte*>(p)); },
      at::TensorOptions().dtype(dtype));
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
                                                std::function<void()> finish_fn, std::vector<at::Tensor> staging) {
  auto w = c10::make_intrusive<WorkChorus>(rank, type, title, work, std::move(keep), std::move(outputs),
                                           std::move(finish_fn));
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
  finish_fn_ = nullptr;  // it may hold a staging buffer too
  staging_.clear();      // back to the pool, once nothing else holds them
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
