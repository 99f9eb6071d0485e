// ProcessGroupChorus's one-to-all and all-to-one data movement: broadcast, all_gather (list,
// tensor and coalesced forms), gather, scatter. Each checks its arguments, builds its rt::Call and
// issues it.
#include <ATen/ATen.h>

#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "torch_backend/process_group.h"
#include "torch_backend/torch_args.h"

namespace chorus::torch_backend {

namespace calls = rt::calls;

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::broadcast(std::vector<at::Tensor>& tensors,
                                                             const c10d::BroadcastOptions& opts) {
  at::Tensor& t = single(tensors, "broadcast", "tensor");
  const int root = static_cast<int>(opts.rootRank);
  check_rank(root, size_, "broadcast", "src");
  TORCH_CHECK_VALUE(opts.rootTensor == 0, "chorus: broadcast: root tensor ", opts.rootTensor,
                    " (one tensor per process)");
  return issue({c10d::OpType::BROADCAST,
                "chorus:broadcast",
                calls::broadcast(t.data_ptr(), nbytes(t), kBytes, root),
                {t},
                {t},
                {},
                {}});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                             std::vector<at::Tensor>& inputs,
                                                             const c10d::AllgatherOptions&) {
  at::Tensor& in = single(inputs, "all_gather", "input");
  TORCH_CHECK_VALUE(outputs.size() == 1 && outputs[0].size() == static_cast<std::size_t>(size_),
                    "chorus: all_gather: expected one list of ", size_, " output tensors (one per rank)");
  check_list(outputs[0], in, "all_gather", "tensor_list");
  at::Tensor flat = pool_.take(static_cast<std::int64_t>(size_) * in.numel(), in.scalar_type());
  std::vector<at::Tensor> outs = outputs[0];
  rt::Call call = calls::all_gather(in.data_ptr(), flat.data_ptr(), nbytes(in), kBytes);
  compress(call, in);
  return issue({c10d::OpType::ALLGATHER,
                "chorus:all_gather",
                std::move(call),
                {in},
                outs,
                [flat, outs]() mutable { unflatten(flat, outs); },
                {flat}});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                   const c10d::AllgatherOptions&) {
  check_tensor(input, "all_gather_into_tensor", "input");
  check_tensor(output, "all_gather_into_tensor", "output");
  same_kind(input, output, "all_gather_into_tensor", "output");
  TORCH_CHECK_VALUE(output.numel() == size_ * input.numel(), "chorus: all_gather_into_tensor: output has ",
                    output.numel(), " elements, expected world size ", size_, " x input ", input.numel());
  rt::Call call = calls::all_gather(input.data_ptr(), output.data_ptr(), nbytes(input), kBytes);
  compress(call, input);
  return issue({c10d::OpType::_ALLGATHER_BASE,
                "chorus:all_gather_into_tensor",
                std::move(call),
                {input, output},
                {output},
                {},
                {}});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                                       std::vector<at::Tensor>& inputs,
                                                                       const c10d::AllgatherOptions&) {
  TORCH_CHECK_VALUE(!inputs.empty(), "chorus: all_gather_coalesced: no input tensors");
  TORCH_CHECK_VALUE(outputs.size() == static_cast<std::size_t>(size_), "chorus: all_gather_coalesced: expected ", size_,
                    " output lists (one per rank), got ", outputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    check_tensor(inputs[i], "all_gather_coalesced", fmt::format("input_tensor_list[{}]", i));
    same_kind(inputs[0], inputs[i], "all_gather_coalesced", fmt::format("input_tensor_list[{}]", i));
  }
  std::vector<at::Tensor> outs;
  for (std::size_t j = 0; j < outputs.size(); ++j) {
    TORCH_CHECK_VALUE(outputs[j].size() == inputs.size(), "chorus: all_gather_coalesced: output list ", j, " has ",
                      outputs[j].size(), " tensors, the input list ", inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      same_shape(inputs[i], outputs[j][i], "all_gather_coalesced", fmt::format("output_tensor_lists[{}][{}]", j, i));
      outs.push_back(outputs[j][i]);
    }
  }
  at::Tensor in = flatten(inputs, pool_);
  at::Tensor flat = pool_.take(static_cast<std::int64_t>(size_) * in.numel(), in.scalar_type());
  return issue({c10d::OpType::ALLGATHER_COALESCED,
                "chorus:all_gather_coalesced",
                calls::all_gather(in.data_ptr(), flat.data_ptr(), nbytes(in), kBytes),
                {},
                outs,
                [flat, outs]() mutable { unflatten(flat, outs); },
                {in, flat}});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::GatherOptions& opts) {
  at::Tensor& in = single(inputs, "gather", "input");
  const int root = static_cast<int>(opts.rootRank);
  check_rank(root, size_, "gather", "dst");
  TorchOp op{c10d::OpType::GATHER, "chorus:gather", {}, {in}, {}, {}, {}};
  at::Tensor flat;
  if (rank_ == root) {
    TORCH_CHECK_VALUE(outputs.size() == 1 && outputs[0].size() == static_cast<std::size_t>(size_),
                      "chorus: gather: the destination expects one list of ", size_, " output tensors");
    check_list(outputs[0], in, "gather", "gather_list");
    flat = pool_.take(static_cast<std::int64_t>(size_) * in.numel(), in.scalar_type());
    op.outputs = outputs[0];
    op.finish = [flat, outs = outputs[0]]() mutable { unflatten(flat, outs); };
    op.staging = {flat};
  } else {
    TORCH_CHECK_VALUE(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                      "chorus: gather: only the destination (rank ", root, ") gives output tensors");
  }
  op.call = calls::gather(in.data_ptr(), flat.defined() ? flat.data_ptr() : nullptr, nbytes(in), kBytes, root);
  return issue(std::move(op));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::scatter(std::vector<at::Tensor>& outputs,
                                                           std::vector<std::vector<at::Tensor>>& inputs,
                                                           const c10d::ScatterOptions& opts) {
  at::Tensor& out = single(outputs, "scatter", "output");
  const int root = static_cast<int>(opts.rootRank);
  check_rank(root, size_, "scatter", "src");
  TorchOp op{c10d::OpType::SCATTER, "chorus:scatter", {}, {out}, {out}, {}, {}};
  at::Tensor flat;
  if (rank_ == root) {
    TORCH_CHECK_VALUE(inputs.size() == 1 && inputs[0].size() == static_cast<std::size_t>(size_),
                      "chorus: scatter: the source expects one list of ", size_, " input tensors");
    check_list(inputs[0], out, "scatter", "scatter_list");
    flat = flatten(inputs[0], pool_);
    op.staging = {flat};
  } else {
    TORCH_CHECK_VALUE(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                      "chorus: scatter: only the source (rank ", root, ") gives input tensors");
  }
  op.call = calls::scatter(flat.defined() ? flat.data_ptr() : nullptr, out.data_ptr(), nbytes(out), kBytes, root);
  return issue(std::move(op));
}

}  // namespace chorus::torch_backend
