#include "torch_backend/process_group.h"

#include <pybind11/pybind11.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "core/error.h"
#include "rt/runtime.h"
#include "torch_backend/c10d_store.h"
#include "torch_backend/torch_args.h"

namespace chorus::torch_backend {

using rt::DType;

ProcessGroupChorus::ProcessGroupChorus(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                       double timeout_s, const std::vector<std::int64_t>& global_ranks,
                                       const std::string& group_name)
    : c10d::ProcessGroup(rank, size) {
  const char* map_text = std::getenv("CHORUS_BACKEND_MAP");
  map_ = BackendMap::parse(map_text != nullptr ? map_text : "", "environment CHORUS_BACKEND_MAP");
  const char* compression_text = std::getenv("CHORUS_COMPRESSION");
  compression_ =
      CompressionMap::parse(compression_text != nullptr ? compression_text : "", "environment CHORUS_COMPRESSION");
  std::optional<rt::FusionOptions> fusion;  // read before anything is initialised: a bad value leaves nothing behind
  if (const char* f = std::getenv("CHORUS_FUSION"); f != nullptr && *f != '\0' && std::string_view(f) != "0")
    fusion = rt::parse_fusion_options(f, "environment CHORUS_FUSION");
  if (!global_ranks.empty()) {  // a sub-group: only its members get here
    if (!rt::is_initialized())
      throw InputError("chorus process group", "a sub-group before the world group: call init_process_group first");
    std::vector<int> ranks(global_ranks.begin(), global_ranks.end());
    group_ = "torch/" + group_name;
    rt::member_group(group_, ranks, "auto");
    return;
  }
  if (!rt::is_initialized()) {
    rt::InitOptions options;
    options.timeout_s = timeout_s;
    options.world = std::make_shared<rt::ExternalWorld>();
    options.world->rank = rank;
    options.world->size = size;
    options.world->store = std::make_shared<C10dStore>(store);
    rt::init(backends_to_init(std::getenv("CHORUS_BACKENDS"), map_), options);
    owns_runtime_ = true;
  } else {
    const std::string first = rt::backends().front();
    if (rt::rank(first) != rank || rt::size(first) != size)
      throw InputError("chorus process group",
                       fmt::format("torch.distributed gives rank {} of {}, but the chorus runtime this program "
                                   "initialised is rank {} of {}",
                                   rank, size, rt::rank(first), rt::size(first)));
  }
  if (fusion) {  // on the backends of the fused operations ("mpi:ring": mpi, that algorithm per fused buffer)
    std::vector<std::string> fused;
    for (CollectiveKind op : {CollectiveKind::kAllReduce, CollectiveKind::kBroadcast, CollectiveKind::kAllGather,
                              CollectiveKind::kReduceScatter, CollectiveKind::kAllToAllSingle, CollectiveKind::kReduce,
                              CollectiveKind::kGather, CollectiveKind::kScatter})
      if (std::find(fused.begin(), fused.end(), plain_backend(backend_for(op))) == fused.end())
        fused.push_back(plain_backend(backend_for(op)));
    fusion_ = std::make_unique<rt::Fusion>(fused, *fusion);
  }
  // Compressed operations overlap with the program: a Compressor (a group and its workers:
  // collectives, sends, receives) per backend they run on. On auto (resolved per call) they run
  // when issued, as on sub-groups.
  for (CollectiveKind op : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kAllToAllSingle,
                            CollectiveKind::kSend, CollectiveKind::kRecv}) {
    const std::string b = compressed_backend(op);
    if (compression_.bound(op) && b != "auto" && compressors_.count(b) == 0)
      compressors_[b] = std::make_unique<rt::compressed::Compressor>(b);
  }
}

ProcessGroupChorus::~ProcessGroupChorus() {
  // Destroying the group waits for chorus's threads: the fusion's, the Compressors', the
  // runtime's lanes (finalize()). One of them may be ending an operation whose WorkChorus it holds
  // last, and freeing a tensor Python has seen takes the GIL. Python destroys the group with the
  // GIL held (pybind11's dealloc), so the waits give it up; a destruction on a thread without it
  // (the last reference dropped in C++) has nothing to give up.
  std::optional<pybind11::gil_scoped_release> no_gil;
  if (Py_IsInitialized() != 0 && PyGILState_Check() != 0) no_gil.emplace();
  fusion_.reset();       // collective, like the group's destruction
  compressors_.clear();  // waits for the compressed collectives still queued
  if (!owns_runtime_) return;
  try {
    rt::finalize();
  } catch (...) {  // a destructor must not throw; finalize leaves a broken backend alive itself
  }
}

std::optional<ProcessGroupChorus::Compressed> ProcessGroupChorus::compressed(CollectiveKind op,
                                                                             const at::Tensor& t) const {
  const auto& bound = compression_.bound(op);
  if (!bound) return std::nullopt;
  const std::size_t n = static_cast<std::size_t>(t.numel());
  switch (t.scalar_type()) {
    case at::kFloat:
      return Compressed{*bound, DType::f32, n};
    case at::kDouble:
      return Compressed{*bound, DType::f64, n};
    case at::kComplexFloat:
      return Compressed{*bound, DType::f32, 2 * n};
    case at::kComplexDouble:
      return Compressed{*bound, DType::f64, 2 * n};
    default:
      return std::nullopt;  // zfp compresses float32 and float64
  }
}

std::string ProcessGroupChorus::compressed_backend(CollectiveKind op) const {
  // all_reduce's "mpi:ring": the compressed ring is chorus's own, on mpi
  return group_.empty() ? plain_backend(backend_for(op)) : backend_for(op);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::run_compressed(TorchOp call) {
  const std::string backend = compressed_backend(call.kind);
  rt::Work w;
  if (const auto it = compressors_.find(backend); it != compressors_.end()) {
    using Lane = rt::compressed::Compressor::LaneKind;
    w = it->second->run(call.title, std::move(call.compressed), nullptr,
                        call.kind == CollectiveKind::kSend   ? Lane::send
                        : call.kind == CollectiveKind::kRecv ? Lane::recv
                                                             : Lane::collective);
  } else {
    rt::compressed::Stats st;
    call.compressed(backend, &st);
    std::lock_guard lock(stats_mutex_);
    stats_.raw_bytes += st.raw_bytes;
    stats_.wire_bytes += st.wire_bytes;
  }
  return WorkChorus::make(rank_, call.type, call.title, std::move(w), std::move(call.keep), std::move(call.outputs),
                          std::move(call.finish), pool_, std::move(call.staging));
}

rt::compressed::Stats ProcessGroupChorus::compression_stats() const {
  std::lock_guard lock(stats_mutex_);
  rt::compressed::Stats total = stats_;
  for (const auto& [backend, c] : compressors_) {
    const auto st = c->stats();
    total.raw_bytes += st.raw_bytes;
    total.wire_bytes += st.wire_bytes;
  }
  return total;
}

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

// ---- The operations: check, build the TorchOp, issue ------------------------------------------------

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::broadcast(std::vector<at::Tensor>& tensors,
                                                             const c10d::BroadcastOptions& opts) {
  at::Tensor& t = single(tensors, "broadcast", "tensor");
  const int root = static_cast<int>(opts.rootRank);
  check_rank(root, size_, "broadcast", "src");
  TORCH_CHECK_VALUE(opts.rootTensor == 0, "chorus: broadcast: root tensor ", opts.rootTensor,
                    " (one tensor per process)");
  void* p = t.data_ptr();
  const std::size_t n = nbytes(t);
  return issue(
      {c10d::OpType::BROADCAST, "chorus:broadcast", CollectiveKind::kBroadcast, {t}, {t}, {}, {}, n},
      [&](const std::string& b) { return rt::broadcast(b, p, n, kBytes, root, true); },
      [&](rt::Fusion& f, const std::string& b) { return f.broadcast(b, p, n, kBytes, root); });
}

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

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                             std::vector<at::Tensor>& inputs,
                                                             const c10d::AllgatherOptions&) {
  at::Tensor& in = single(inputs, "all_gather", "input");
  TORCH_CHECK_VALUE(outputs.size() == 1 && outputs[0].size() == static_cast<std::size_t>(size_),
                    "chorus: all_gather: expected one list of ", size_, " output tensors (one per rank)");
  check_list(outputs[0], in, "all_gather", "tensor_list");
  at::Tensor flat = pool_->take(static_cast<std::int64_t>(size_) * in.numel(), in.scalar_type());
  std::vector<at::Tensor> outs = outputs[0];
  void* i = in.data_ptr();
  void* o = flat.data_ptr();
  TorchOp call{c10d::OpType::ALLGATHER,
               "chorus:all_gather",
               CollectiveKind::kAllGather,
               {in},
               outs,
               [flat, outs]() mutable { unflatten(flat, outs); },
               {flat}};
  if (auto c = compressed(CollectiveKind::kAllGather, in))
    call.compressed = [i, o, c = *c](const std::string& b, rt::compressed::Stats* st) {
      rt::compressed::all_gather(b, i, o, c.count, c.dtype, c.bound, st);
    };
  return issue(
      std::move(call), [&](const std::string& b) { return rt::all_gather(b, i, o, nbytes(in), kBytes, true); },
      kNotFused);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                   const c10d::AllgatherOptions&) {
  check_tensor(input, "all_gather_into_tensor", "input");
  check_tensor(output, "all_gather_into_tensor", "output");
  same_kind(input, output, "all_gather_into_tensor", "output");
  TORCH_CHECK_VALUE(output.numel() == size_ * input.numel(), "chorus: all_gather_into_tensor: output has ",
                    output.numel(), " elements, expected world size ", size_, " x input ", input.numel());
  void* i = input.data_ptr();
  void* o = output.data_ptr();
  const std::size_t n = nbytes(input);
  TorchOp call{c10d::OpType::_ALLGATHER_BASE,
               "chorus:all_gather_into_tensor",
               CollectiveKind::kAllGather,
               {input, output},
               {output},
               {},
               {},
               n};
  if (auto c = compressed(CollectiveKind::kAllGather, input))
    call.compressed = [i, o, c = *c](const std::string& b, rt::compressed::Stats* st) {
      rt::compressed::all_gather(b, i, o, c.count, c.dtype, c.bound, st);
    };
  return issue(
      std::move(call), [&](const std::string& b) { return rt::all_gather(b, i, o, n, kBytes, true); },
      [&](rt::Fusion& f, const std::string& b) { return f.all_gather(b, i, o, n, kBytes); });
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
  at::Tensor in = flatten(inputs, *pool_);
  at::Tensor flat = pool_->take(static_cast<std::int64_t>(size_) * in.numel(), in.scalar_type());
  return issue(
      {c10d::OpType::ALLGATHER_COALESCED,
       "chorus:all_gather_coalesced",
       CollectiveKind::kAllGather,
       {},
       outs,
       [flat, outs]() mutable { unflatten(flat, outs); },
       {in, flat}},
      [&](const std::string& b) { return rt::all_gather(b, in.data_ptr(), flat.data_ptr(), nbytes(in), kBytes, true); },
      kNotFused);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::GatherOptions& opts) {
  at::Tensor& in = single(inputs, "gather", "input");
  const int root = static_cast<int>(opts.rootRank);
  check_rank(root, size_, "gather", "dst");
  TorchOp call{c10d::OpType::GATHER, "chorus:gather", CollectiveKind::kGather, {in}, {}, {}, {}, nbytes(in)};
  at::Tensor flat;
  if (rank_ == root) {
    TORCH_CHECK_VALUE(outputs.size() == 1 && outputs[0].size() == static_cast<std::size_t>(size_),
                      "chorus: gather: the destination expects one list of ", size_, " output tensors");
    check_list(outputs[0], in, "gather", "gather_list");
    flat = pool_->take(static_cast<std::int64_t>(size_) * in.numel(), in.scalar_type());
    call.outputs = outputs[0];
    call.finish = [flat, outs = outputs[0]]() mutable { unflatten(flat, outs); };
    call.staging = {flat};
  } else {
    TORCH_CHECK_VALUE(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                      "chorus: gather: only the destination (rank ", root, ") gives output tensors");
  }
  const void* i = in.data_ptr();
  void* gathered = flat.defined() ? flat.data_ptr() : nullptr;
  const std::size_t n = nbytes(in);
  return issue(
      std::move(call), [&](const std::string& b) { return rt::gather(b, i, gathered, n, kBytes, root, true); },
      [&](rt::Fusion& f, const std::string& b) { return f.gather(b, i, gathered, n, kBytes, root); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::scatter(std::vector<at::Tensor>& outputs,
                                                           std::vector<std::vector<at::Tensor>>& inputs,
                                                           const c10d::ScatterOptions& opts) {
  at::Tensor& out = single(outputs, "scatter", "output");
  const int root = static_cast<int>(opts.rootRank);
  check_rank(root, size_, "scatter", "src");
  TorchOp call{c10d::OpType::SCATTER, "chorus:scatter", CollectiveKind::kScatter, {out}, {out}, {}, {}, nbytes(out)};
  at::Tensor flat;
  if (rank_ == root) {
    TORCH_CHECK_VALUE(inputs.size() == 1 && inputs[0].size() == static_cast<std::size_t>(size_),
                      "chorus: scatter: the source expects one list of ", size_, " input tensors");
    check_list(inputs[0], out, "scatter", "scatter_list");
    flat = flatten(inputs[0], *pool_);
    call.staging = {flat};
  } else {
    TORCH_CHECK_VALUE(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                      "chorus: scatter: only the source (rank ", root, ") gives input tensors");
  }
  const void* blocks = flat.defined() ? flat.data_ptr() : nullptr;
  void* o = out.data_ptr();
  const std::size_t n = nbytes(out);
  return issue(
      std::move(call), [&](const std::string& b) { return rt::scatter(b, blocks, o, n, kBytes, root, true); },
      [&](rt::Fusion& f, const std::string& b) { return f.scatter(b, blocks, o, n, kBytes, root); });
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

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                                 std::vector<std::int64_t>& output_splits,
                                                                 std::vector<std::int64_t>& input_splits,
                                                                 const c10d::AllToAllOptions&) {
  check_tensor(input, "all_to_all_single", "input");
  check_tensor(output, "all_to_all_single", "output");
  same_kind(input, output, "all_to_all_single", "output");
  const void* i = input.data_ptr();
  void* o = output.data_ptr();
  TorchOp call{c10d::OpType::ALLTOALL_BASE,
               "chorus:all_to_all_single",
               CollectiveKind::kAllToAllSingle,
               {input, output},
               {output}};
  if (output_splits.empty() && input_splits.empty()) {
    TORCH_CHECK_VALUE(input.numel() == output.numel(), "chorus: all_to_all_single: output has ", output.numel(),
                      " elements, the input ", input.numel());
    const std::size_t block = split_bytes(input, {}, size_, "input").counts[0];  // bytes per rank
    call.fused_bytes = block;
    if (auto c = compressed(CollectiveKind::kAllToAllSingle, input))
      call.compressed = [i, o, c = *c, n = static_cast<std::size_t>(size_)](const std::string& b,
                                                                            rt::compressed::Stats* st) {
        rt::compressed::all_to_all_single(b, i, o, c.count / n, c.dtype, c.bound, st);
      };
    return issue(
        std::move(call), [&](const std::string& b) { return rt::all_to_all_single(b, i, o, block, kBytes, true); },
        [&](rt::Fusion& f, const std::string& b) { return f.all_to_all_single(b, i, o, block, kBytes); });
  }
  const auto sends = split_bytes(input, input_splits, size_, "input");
  const auto recvs = split_bytes(output, output_splits, size_, "output");
  // (all_to_allv takes no algorithm: "mpi:pairwise" of the map is mpi here). With fusion, every
  // one goes to it whatever its size (fused_bytes 0): the sizes differ per rank, so only the
  // fusion's agreement can decide alike on every rank what runs alone.
  return issue(
      std::move(call),
      [&](const std::string& b) {
        return rt::all_to_allv(plain_backend(b), i, sends.counts, sends.displs, o, recvs.counts, recvs.displs, kBytes,
                               true);
      },
      [&](rt::Fusion& f, const std::string& b) {
        return f.all_to_allv(plain_backend(b), i, sends.counts, sends.displs, o, recvs.counts, recvs.displs, kBytes);
      });
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
  auto w = rt::all_to_all(backend_for(CollectiveKind::kAllToAll), ins, in_counts, outs, out_counts, kBytes, true);
  std::vector<at::Tensor> keep = inputs;
  keep.insert(keep.end(), outputs.begin(), outputs.end());
  return issue(
      {c10d::OpType::ALLTOALL, "chorus:all_to_all", CollectiveKind::kAllToAll, std::move(keep), outputs},
      [&](const std::string& b) { return rt::all_to_all(b, ins, in_counts, outs, out_counts, kBytes, true); },
      kNotFused);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::send(std::vector<at::Tensor>& tensors, int dst, int tag) {
  at::Tensor& t = single(tensors, "send", "tensor");
  check_rank(dst, size_, "send", "dst");
  check_tag(tag, "send");
  const void* p = t.data_ptr();
  TorchOp call{c10d::OpType::SEND, "chorus:send", CollectiveKind::kSend, {t}, {t}};
  if (auto c = compressed(CollectiveKind::kSend, t))
    call.compressed = [p, c = *c, dst](const std::string& b, rt::compressed::Stats* st) {
      rt::compressed::send(b, p, c.count, c.dtype, dst, c.bound, st);
    };
  return issue(
      std::move(call), [&](const std::string& b) { return rt::send(b, p, nbytes(t), kBytes, dst, true); }, kNotFused);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::recv(std::vector<at::Tensor>& tensors, int src, int tag) {
  at::Tensor& t = single(tensors, "recv", "tensor");
  check_rank(src, size_, "recv", "src");
  check_tag(tag, "recv");
  void* p = t.data_ptr();
  TorchOp call{c10d::OpType::RECV, "chorus:recv", CollectiveKind::kRecv, {t}, {t}};
  if (auto c = compressed(CollectiveKind::kRecv, t))
    call.compressed = [p, c = *c, src](const std::string& b, rt::compressed::Stats* st) {
      rt::compressed::recv(b, p, c.count, c.dtype, src, c.bound, st);
    };
  return issue(
      std::move(call), [&](const std::string& b) { return rt::recv(b, p, nbytes(t), kBytes, src, true); }, kNotFused);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::recvAnysource(std::vector<at::Tensor>&, int) {
  TORCH_CHECK_VALUE(false, "chorus: recv without src (from any source) is not supported; give src");
  return {};
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::barrier(const c10d::BarrierOptions&) {
  return issue(
      {c10d::OpType::BARRIER, "chorus:barrier", CollectiveKind::kBarrier, {}, {}},
      [](const std::string& b) { return rt::barrier(b, true); }, kNotFused);
}

}  // namespace chorus::torch_backend
