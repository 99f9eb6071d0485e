#pragma once
// ProcessGroupChorus::issue(), the one choice of how an operation runs (compressed, fused or
// plain) and its WorkChorus: a template, defined here for the files of operations (ops_*.cpp).
#include <type_traits>
#include <utility>

#include "rt/work.h"
#include "torch_backend/process_group.h"
#include "torch_backend/work_chorus.h"

namespace chorus::torch_backend {

template <typename Plain, typename Fused>
c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::issue(TorchOp call, const Plain& run_plain, const Fused& run_fused) {
  if (call.compressed) return run_compressed(std::move(call));
  const std::string& backend = backend_for(call.kind);
  rt::Work w;
  if constexpr (std::is_null_pointer_v<Fused>)
    w = run_plain(backend);
  else
    w = fused(call.fused_bytes) ? run_fused(*fusion_, backend) : run_plain(backend);
  return WorkChorus::make(rank_, call.type, call.title, std::move(w), std::move(call.keep), std::move(call.outputs),
                          std::move(call.finish), pool_, std::move(call.staging));
}

}  // namespace chorus::torch_backend
