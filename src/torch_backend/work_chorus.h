#pragma once
// What ProcessGroupChorus hands back to torch: the Work of an issued operation (WorkChorus:
// completed, with its future, by rt::Work::on_complete on the thread that ends the operation)
// and the pool of staging buffers the list forms copy through.
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "rt/buffer_pool.h"
#include "rt/work.h"

namespace chorus::torch_backend {

// Staging buffers for the list forms (all_gather into a list, scatter from one, ...): tensors
// over the memory of an rt::BufferPool, which gets it back when the tensor's storage is freed
// (the operation has ended and nothing refers to it), so the next list form reuses it.
class StagingPool {
 public:
  // A contiguous 1-D tensor of `numel` elements of `dtype` over pooled memory (contents undefined).
  at::Tensor take(std::int64_t numel, at::ScalarType dtype);

 private:
  std::shared_ptr<rt::BufferPool> pool_ = rt::BufferPool::make({});  // the staging limits
};

class WorkChorus : public c10d::Work {
 public:
  // Wraps an issued runtime operation. `finish_fn` (may be empty) runs once it has succeeded —
  // copies out of a staging buffer — before the work and its future complete. `keep` holds the
  // tensors the operation reads or writes until it ends; `outputs` are result() and the
  // future's value.
  // `staging` (may be empty) is let go once the operation has ended, whatever the outcome (its
  // memory goes back to its StagingPool when nothing else refers to it).
  static c10::intrusive_ptr<WorkChorus> make(int rank, c10d::OpType type, const char* title, rt::Work work,
                                             std::vector<at::Tensor> keep, std::vector<at::Tensor> outputs,
                                             std::function<void()> finish_fn = {},
                                             std::vector<at::Tensor> staging = {});
  WorkChorus(int rank, c10d::OpType type, const char* title, rt::Work work, std::vector<at::Tensor> keep,
             std::vector<at::Tensor> outputs, std::function<void()> finish_fn);
  bool wait(std::chrono::milliseconds timeout) override;
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  void on_done(std::exception_ptr error);
  rt::Work work_;
  std::vector<at::Tensor> staging_;
  std::vector<at::Tensor> keep_;
  std::vector<at::Tensor> outputs_;
  std::function<void()> finish_fn_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace chorus::torch_backend
