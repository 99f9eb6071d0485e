// ProcessGroupChorus's reductions: all_reduce (and its coalesced form), reduce, reduce_scatter
// (list and tensor forms). Each checks its arguments, builds its rt::Call and issues it.
#include <ATen/ATen.h>

#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "torch_backend/process_group.h"
#include "torch_backend/torch_args.h"

namespace chorus::torch_backend {

namespace calls = rt::calls;

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allreduce(std::vector<at::Tensor>& tensors,
                                                             const c10d::AllreduceOptions& opts) {
  at::Tensor& t = single(tensors, "all_reduce", "tensor");
  const Reduction r = reduction_of(t, opts.reduceOp, "all_reduce");
  void* p = t.data_ptr();
  rt::Call call = calls::all_reduce(p, p, count_of(t, r), r.dtype, r.op);
  compress(call, t);
  return issue({c10d::OpType::ALLREDUCE, "chorus:all_reduce", std::move(call), {t}, {t}, {}, {}});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                       const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK_VALUE(!tensors.empty(), "chorus: all_reduce_coalesced: no tensors");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    check_tensor(tensors[i], "all_reduce_coalesced", fmt::format("tensors[{}]", i));
    same_kind(tensors[0], tensors[i], "all_reduce_coalesced", fmt::format("tensors[{}]", i));
  }
  const Reduction r = reduction_of(tensors[0], opts.reduceOp, "all_reduce_coalesced");
  at::Tensor flat = flatten(tensors, pool_);  // one operation for all: the fusion torch asks for here
  void* p = flat.data_ptr();
  rt::Call call = calls::all_reduce(p, p, count_of(flat, r), r.dtype, r.op);
  compress(call, flat);
  return issue({c10d::OpType::ALLREDUCE_COALESCED,
                "chorus:all_reduce_coalesced",
                std::move(call),
                tensors,
                tensors,
                [flat, tensors]() mutable { unflatten(flat, tensors); },
                {flat}});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::reduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::ReduceOptions& opts) {
  at::Tensor& t = single(tensors, "reduce", "tensor");
  const int root = static_cast<int>(opts.rootRank);
  check_rank(root, size_, "reduce", "dst");
  TORCH_CHECK_VALUE(opts.rootTensor == 0, "chorus: reduce: root tensor ", opts.rootTensor, " (one tensor per process)");
  const Reduction r = reduction_of(t, opts.reduceOp, "reduce");
  void* p = t.data_ptr();
  return issue({c10d::OpType::REDUCE,
                "chorus:reduce",
                calls::reduce(p, p, count_of(t, r), r.dtype, r.op, root),
                {t},
                {t},
                {},
                {}});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                  std::vector<std::vector<at::Tensor>>& inputs,
                                                                  const c10d::ReduceScatterOptions& opts) {
  at::Tensor& out = single(outputs, "reduce_scatter", "output");
  TORCH_CHECK_VALUE(inputs.size() == 1 && inputs[0].size() == static_cast<std::size_t>(size_),
                    "chorus: reduce_scatter: expected one list of ", size_, " input tensors (one per rank)");
  check_list(inputs[0], out, "reduce_scatter", "input_list");
  const Reduction r = reduction_of(out, opts.reduceOp, "reduce_scatter");
  at::Tensor flat = flatten(inputs[0], pool_);
  return issue({c10d::OpType::REDUCE_SCATTER,
                "chorus:reduce_scatter",
                calls::reduce_scatter(flat.data_ptr(), out.data_ptr(), count_of(out, r), r.dtype, r.op),
                {out},
                {out},
                {},
                {flat}});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                        const c10d::ReduceScatterOptions& opts) {
  check_tensor(input, "reduce_scatter_tensor", "input");
  check_tensor(output, "reduce_scatter_tensor", "output");
  same_kind(output, input, "reduce_scatter_tensor", "input");
  TORCH_CHECK_VALUE(input.numel() == size_ * output.numel(), "chorus: reduce_scatter_tensor: input has ", input.numel(),
                    " elements, expected world size ", size_, " x output ", output.numel());
  const Reduction r = reduction_of(output, opts.reduceOp, "reduce_scatter_tensor");
  return issue({c10d::OpType::_REDUCE_SCATTER_BASE,
                "chorus:reduce_scatter_tensor",
                calls::reduce_scatter(input.data_ptr(), output.data_ptr(), count_of(output, r), r.dtype, r.op),
                {input, output},
                {output},
                {},
                {}});
}

}  // namespace chorus::torch_backend
