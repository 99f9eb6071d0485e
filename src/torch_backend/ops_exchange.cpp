// ProcessGroupChorus's exchanges: all_to_all (single tensor, equal or uneven splits, and list
// forms), send, recv, and barrier. Each checks its arguments, builds its rt::Call and issues it.
#include <ATen/ATen.h>

#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "torch_backend/process_group.h"
#include "torch_backend/torch_args.h"

namespace chorus::torch_backend {

namespace calls = rt::calls;

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                                 std::vector<std::int64_t>& output_splits,
                                                                 std::vector<std::int64_t>& input_splits,
                                                                 const c10d::AllToAllOptions&) {
  check_tensor(input, "all_to_all_single", "input");
  check_tensor(output, "all_to_all_single", "output");
  same_kind(input, output, "all_to_all_single", "output");
  const void* i = input.data_ptr();
  void* o = output.data_ptr();
  TorchOp op{c10d::OpType::ALLTOALL_BASE, "chorus:all_to_all_single", {}, {input, output}, {output}, {}, {}};
  if (output_splits.empty() && input_splits.empty()) {
    TORCH_CHECK_VALUE(input.numel() == output.numel(), "chorus: all_to_all_single: output has ", output.numel(),
                      " elements, the input ", input.numel());
    const std::size_t block = split_bytes(input, {}, size_, "input").counts[0];  // bytes per rank
    op.call = calls::all_to_all_single(i, o, block, kBytes);
    compress(op.call, input);
  } else {
    const auto sends = split_bytes(input, input_splits, size_, "input");
    const auto recvs = split_bytes(output, output_splits, size_, "output");
    op.call = calls::all_to_allv(i, sends.counts, sends.displs, o, recvs.counts, recvs.displs, kBytes);
  }
  return issue(std::move(op));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::alltoall(std::vector<at::Tensor>& outputs,
                                                            std::vector<at::Tensor>& inputs,
                                                            const c10d::AllToAllOptions&) {
  TORCH_CHECK_VALUE(inputs.size() == static_cast<std::size_t>(size_) && outputs.size() == inputs.size(),
                    "chorus: all_to_all: expected ", size_, " input and ", size_, " output tensors, got ",
                    inputs.size(), " and ", outputs.size());
  std::vector<const void*> ins;
  std::vector<void*> outs;
  rt::Counts in_counts, out_counts;
  for (std::size_t j = 0; j < inputs.size(); ++j) {
    check_tensor(inputs[j], "all_to_all", fmt::format("input_tensor_list[{}]", j));
    check_tensor(outputs[j], "all_to_all", fmt::format("output_tensor_list[{}]", j));
    same_kind(inputs[0], inputs[j], "all_to_all", fmt::format("input_tensor_list[{}]", j));
    same_kind(inputs[0], outputs[j], "all_to_all", fmt::format("output_tensor_list[{}]", j));
    ins.push_back(inputs[j].data_ptr());
    outs.push_back(outputs[j].data_ptr());
    in_counts.push_back(nbytes(inputs[j]));
    out_counts.push_back(nbytes(outputs[j]));
  }
  std::vector<at::Tensor> keep = inputs;
  keep.insert(keep.end(), outputs.begin(), outputs.end());
  return issue({c10d::OpType::ALLTOALL, "chorus:all_to_all",
                calls::all_to_all(ins, in_counts, outs, out_counts, kBytes), std::move(keep), outputs});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::send(std::vector<at::Tensor>& tensors, int dst, int tag) {
  at::Tensor& t = single(tensors, "send", "tensor");
  check_rank(dst, size_, "send", "dst");
  check_tag(tag, "send");
  rt::Call call = calls::send(t.data_ptr(), nbytes(t), kBytes, dst);
  compress(call, t);
  return issue({c10d::OpType::SEND, "chorus:send", std::move(call), {t}, {t}});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::recv(std::vector<at::Tensor>& tensors, int src, int tag) {
  at::Tensor& t = single(tensors, "recv", "tensor");
  check_rank(src, size_, "recv", "src");
  check_tag(tag, "recv");
  rt::Call call = calls::recv(t.data_ptr(), nbytes(t), kBytes, src);
  compress(call, t);
  return issue({c10d::OpType::RECV, "chorus:recv", std::move(call), {t}, {t}});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::recvAnysource(std::vector<at::Tensor>&, int) {
  TORCH_CHECK_VALUE(false, "chorus: recv without src (from any source) is not supported; give src");
  return {};
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::barrier(const c10d::BarrierOptions&) {
  return issue({c10d::OpType::BARRIER, "chorus:barrier", calls::barrier(), {}, {}});
}

}  // namespace chorus::torch_backend
