// ProcessGroupChorus's reductions: all_reduce (and its coalesced form), reduce, reduce_scatter
// (list and tensor forms). Each checks its arguments, builds its TorchOp and issues it.
#include <ATen/ATen.h>

#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "rt/runtime.h"
#include "torch_backend/issue.h"
#include "torch_backend/process_group.h"
#include "torch_backend/torch_args.h"

namespace chorus::torch_backend {

using rt::DType;

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allreduce(std::vector<at::Tensor>& tensors,
                                                             const c10d::AllreduceOptions& opts) {
  at::Tensor& t = single(tensors, "all_reduce", "tensor");
  const Reduction r = reduction_of(t, opts.reduceOp, "all_reduce");
  void* p = t.data_ptr();
  const std::size_t count = count_of(t, r);
  TorchOp call{c10d::OpType::ALLREDUCE,         "chorus:all_reduce", CollectiveKind::kAllReduce, {t}, {t}, {}, {},
               count * rt::dtype_bytes(r.dtype)};
  if (auto c = compressed(CollectiveKind::kAllReduce, t); c && (r.op == rt::ReduceOp::sum || r.op == rt::ReduceOp::avg))
    call.compressed = [p, c = *c, op = r.op](const std::string& b, rt::compressed::Stats* st) {
      rt::compressed::all_reduce(b, p, p, c.count, c.dtype, op, c.bound, st);
    };
  return issue(
      std::move(call), [&](const std::string& b) { return rt::all_reduce(b, p, p, count, r.dtype, r.op, true); },
      [&](rt::Fusion& f, const std::string& b) { return f.all_reduce(b, p, p, count, r.dtype, r.op); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                       const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK_VALUE(!tensors.empty(), "chorus: all_reduce_coalesced: no tensors");
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    check_tensor(tensors[i], "all_reduce_coalesced", fmt::format("tensors[{}]", i));
    same_kind(tensors[0], tensors[i], "all_reduce_coalesced", fmt::format("tensors[{}]", i));
  }
  const Reduction r = reduction_of(tensors[0], opts.reduceOp, "all_reduce_coalesced");
  at::Tensor flat = flatten(tensors, *pool_);  // one operation for all: the fusion torch asks for here
  void* p = flat.data_ptr();
  TorchOp call{c10d::OpType::ALLREDUCE_COALESCED,
               "chorus:all_reduce_coalesced",
               CollectiveKind::kAllReduce,
               tensors,
               tensors,
               [flat, tensors]() mutable { unflatten(flat, tensors); },
               {flat}};
  if (auto c = compressed(CollectiveKind::kAllReduce, flat);
      c && (r.op == rt::ReduceOp::sum || r.op == rt::ReduceOp::avg))
    call.compressed = [p, c = *c, op = r.op](const std::string& b, rt::compressed::Stats* st) {
      rt::compressed::all_reduce(b, p, p, c.count, c.dtype, op, c.bound, st);
    };
  return issue(
      std::move(call),
      [&](const std::string& b) { return rt::all_reduce(b, p, p, count_of(flat, r), r.dtype, r.op, true); }, kNotFused);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::reduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::ReduceOptions& opts) {
  at::Tensor& t = single(tensors, "reduce", "tensor");
  const int root = static_cast<int>(opts.rootRank);
  check_rank(root, size_, "reduce", "dst");
  TORCH_CHECK_VALUE(opts.rootTensor == 0, "chorus: reduce: root tensor ", opts.rootTensor, " (one tensor per process)");
  const Reduction r = reduction_of(t, opts.reduceOp, "reduce");
  void* p = t.data_ptr();
  const std::size_t count = count_of(t, r);
  return issue(
      {c10d::OpType::REDUCE,
       "chorus:reduce",
       CollectiveKind::kReduce,
       {t},
       {t},
       {},
       {},
       count * rt::dtype_bytes(r.dtype)},
      [&](const std::string& b) { return rt::reduce(b, p, p, count, r.dtype, r.op, root, true); },
      [&](rt::Fusion& f, const std::string& b) { return f.reduce(b, p, p, count, r.dtype, r.op, root); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                  std::vector<std::vector<at::Tensor>>& inputs,
                                                                  const c10d::ReduceScatterOptions& opts) {
  at::Tensor& out = single(outputs, "reduce_scatter", "output");
  TORCH_CHECK_VALUE(inputs.size() == 1 && inputs[0].size() == static_cast<std::size_t>(size_),
                    "chorus: reduce_scatter: expected one list of ", size_, " input tensors (one per rank)");
  check_list(inputs[0], out, "reduce_scatter", "input_list");
  const Reduction r = reduction_of(out, opts.reduceOp, "reduce_scatter");
  at::Tensor flat = flatten(inputs[0], *pool_);
  return issue(
      {c10d::OpType::REDUCE_SCATTER, "chorus:reduce_scatter", CollectiveKind::kReduceScatter, {out}, {out}, {}, {flat}},
      [&](const std::string& b) {
        return rt::reduce_scatter(b, flat.data_ptr(), out.data_ptr(), count_of(out, r), r.dtype, r.op, true);
      },
      kNotFused);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                        const c10d::ReduceScatterOptions& opts) {
  check_tensor(input, "reduce_scatter_tensor", "input");
  check_tensor(output, "reduce_scatter_tensor", "output");
  same_kind(output, input, "reduce_scatter_tensor", "input");
  TORCH_CHECK_VALUE(input.numel() == size_ * output.numel(), "chorus: reduce_scatter_tensor: input has ", input.numel(),
                    " elements, expected world size ", size_, " x output ", output.numel());
  const Reduction r = reduction_of(output, opts.reduceOp, "reduce_scatter_tensor");
  const void* i = input.data_ptr();
  void* o = output.data_ptr();
  const std::size_t count = count_of(output, r);
  return issue(
      {c10d::OpType::_REDUCE_SCATTER_BASE,
       "chorus:reduce_scatter_tensor",
       CollectiveKind::kReduceScatter,
       {input, output},
       {output},
       {},
       {},
       nbytes(output)},
      [&](const std::string& b) { return rt::reduce_scatter(b, i, o, count, r.dtype, r.op, true); },
      [&](rt::Fusion& f, const std::string& b) { return f.reduce_scatter(b, i, o, count, r.dtype, r.op); });
}

}  // namespace chorus::torch_backend
