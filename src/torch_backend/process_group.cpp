#include "torch_backend/process_group.h"

#include <pybind11/pybind11.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"
#include "rt/runtime.h"
#include "torch_backend/c10d_store.h"

namespace chorus::torch_backend {

using rt::DType;
using rt::OpKind;

namespace {

constexpr DType kBytes = DType::u8;  // data movement is dtype-blind

std::size_t nbytes(const at::Tensor& t) { return static_cast<std::size_t>(t.numel()) * t.element_size(); }

void check_tensor(const at::Tensor& t, std::string_view op, std::string_view what) {
  TORCH_CHECK_VALUE(t.defined(), "chorus: ", op, ": ", what, " is an undefined tensor");
  TORCH_CHECK_VALUE(t.device().is_cpu(), "chorus: ", op, ": ", what, " is on ", t.device().str(),
                    "; the chorus backend moves CPU tensors (use .cpu())");
  TORCH_CHECK_VALUE(t.layout() == at::kStrided, "chorus: ", op, ": ", what, " is not dense (layout ", t.layout(),
                    ")");
  TORCH_CHECK_VALUE(t.is_contiguous(), "chorus: ", op, ": ", what, " is not contiguous (use .contiguous())");
}

at::Tensor& single(std::vector<at::Tensor>& tensors, std::string_view op, std::string_view what) {
  TORCH_CHECK_VALUE(tensors.size() == 1, "chorus: ", op, ": expected one ", what, " tensor per process, got ",
                    tensors.size());
  check_tensor(tensors[0], op, what);
  return tensors[0];
}

void same_kind(const at::Tensor& a, const at::Tensor& b, std::string_view op, std::string_view what) {
  TORCH_CHECK_TYPE(a.scalar_type() == b.scalar_type(), "chorus: ", op, ": ", what, " has dtype ", b.scalar_type(),
                   ", the input ", a.scalar_type());
}

void same_shape(const at::Tensor& a, const at::Tensor& b, std::string_view op, std::string_view what) {
  same_kind(a, b, op, what);
  TORCH_CHECK_VALUE(a.numel() == b.numel(), "chorus: ", op, ": ", what, " has ", b.numel(), " elements, the input ",
                    a.numel());
}

// A reduction's element type, element count factor (complex: two floats) and operator.
struct Reduction {
  DType dtype;
  std::size_t factor = 1;
  rt::ReduceOp op;
};

Reduction reduction_of(const at::Tensor& t, const c10d::ReduceOp& reduce_op, std::string_view op) {
  using R = c10d::ReduceOp;
  rt::ReduceOp rop = rt::ReduceOp::sum;
  switch (static_cast<R::RedOpType>(reduce_op)) {
    case R::SUM: rop = rt::ReduceOp::sum; break;
    case R::AVG: rop = rt::ReduceOp::avg; break;
    case R::PRODUCT: rop = rt::ReduceOp::prod; break;
    case R::MIN: rop = rt::ReduceOp::min; break;
    case R::MAX: rop = rt::ReduceOp::max; break;
    default:
      TORCH_CHECK_VALUE(false, "chorus: ", op, ": reduce op ", static_cast<int>(static_cast<R::RedOpType>(reduce_op)),
                        " (BAND, BOR, BXOR or PREMUL_SUM) is not supported; chorus reduces with SUM, AVG, PRODUCT, MIN, MAX");
  }
  switch (t.scalar_type()) {
    case at::kHalf: return {DType::f16, 1, rop};
    case at::kBFloat16: return {DType::bf16, 1, rop};
    case at::kFloat: return {DType::f32, 1, rop};
    case at::kDouble: return {DType::f64, 1, rop};
    case at::kChar: return {DType::i8, 1, rop};
    case at::kByte: return {DType::u8, 1, rop};
    case at::kInt: return {DType::i32, 1, rop};
    case at::kLong: return {DType::i64, 1, rop};
    case at::kBool:
      // As NCCL: a sum of booleans is their logical or, a product their logical and.
      TORCH_CHECK_VALUE(rop != rt::ReduceOp::avg, "chorus: ", op, ": AVG of a bool tensor is undefined");
      if (rop == rt::ReduceOp::sum) rop = rt::ReduceOp::max;
      if (rop == rt::ReduceOp::prod) rop = rt::ReduceOp::min;
      return {DType::u8, 1, rop};
    case at::kComplexFloat:
    case at::kComplexDouble:
      TORCH_CHECK_VALUE(rop == rt::ReduceOp::sum || rop == rt::ReduceOp::avg, "chorus: ", op,
                        ": complex tensors reduce with SUM or AVG only (PRODUCT, MIN and MAX are not element-wise on "
                        "the real and imaginary parts)");
      return {t.scalar_type() == at::kComplexFloat ? DType::f32 : DType::f64, 2, rop};
    default:
      TORCH_CHECK_TYPE(false, "chorus: ", op, ": cannot reduce dtype ", t.scalar_type(),
                       "; chorus reduces float16, bfloat16, float32, float64, int8, uint8, int32, int64, bool, "
                       "complex64, complex128");
  }
  return {};
}

std::size_t count_of(const at::Tensor& t, const Reduction& r) { return static_cast<std::size_t>(t.numel()) * r.factor; }

// "mpi:ring" names all_reduce's algorithm on mpi: the backend is mpi.
std::string plain_backend(const std::string& backend) { return backend.substr(0, backend.find(':')); }

void check_rank(int r, int size, std::string_view op, std::string_view what) {
  TORCH_CHECK_VALUE(r >= 0 && r < size, "chorus: ", op, ": ", what, " ", r, " is not a rank of this group (size ", size,
                    ")");
}

// `tensors` one after another in a pooled staging buffer.
at::Tensor flatten(const std::vector<at::Tensor>& tensors, StagingPool& pool) {
  std::int64_t numel = 0;
  std::vector<at::Tensor> flat;
  flat.reserve(tensors.size());
  for (const auto& t : tensors) {
    flat.push_back(t.reshape({-1}));
    numel += t.numel();
  }
  at::Tensor out = pool.take(numel, tensors.at(0).scalar_type());
  at::cat_out(out, flat);
  return out;
}

// Copies consecutive pieces of `flat` into `tensors`.
void unflatten(const at::Tensor& flat, std::vector<at::Tensor>& tensors) {
  std::int64_t offset = 0;
  for (auto& t : tensors) {
    t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  }
}

}  // namespace

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

// ---- ProcessGroupChorus ------------------------------------------------------------------------

ProcessGroupChorus::ProcessGroupChorus(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                       double timeout_s, const std::vector<std::int64_t>& global_ranks,
                                       const std::string& group_name)
    : c10d::ProcessGroup(rank, size) {
  const char* map_text = std::getenv("CHORUS_BACKEND_MAP");
  map_ = BackendMap::parse(map_text != nullptr ? map_text : "", "environment CHORUS_BACKEND_MAP");
  const char* compression_text = std::getenv("CHORUS_COMPRESSION");
  compression_ = CompressionMap::parse(compression_text != nullptr ? compression_text : "", "environment CHORUS_COMPRESSION");
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
    for (OpKind op : {OpKind::all_reduce, OpKind::broadcast, OpKind::all_gather, OpKind::reduce_scatter,
                      OpKind::all_to_all_single, OpKind::reduce, OpKind::gather, OpKind::scatter})
      if (std::find(fused.begin(), fused.end(), plain_backend(backend_for(op))) == fused.end())
        fused.push_back(plain_backend(backend_for(op)));
    fusion_ = std::make_unique<rt::Fusion>(fused, *fusion);
  }
  // Compressed operations overlap with the program: a Compressor (a group and its workers:
  // collectives, sends, receives) per backend they run on. On auto (resolved per call) they run
  // when issued, as on sub-groups.
  for (OpKind op : {OpKind::all_reduce, OpKind::all_gather, OpKind::all_to_all_single, OpKind::send, OpKind::recv}) {
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
  fusion_.reset();  // collective, like the group's destruction
  compressors_.clear();  // waits for the compressed collectives still queued
  if (!owns_runtime_) return;
  try {
    rt::finalize();
  } catch (...) {  // a destructor must not throw; finalize leaves a broken backend alive itself
  }
}

std::optional<ProcessGroupChorus::Compressed> ProcessGroupChorus::compressed(OpKind op, const at::Tensor& t) const {
  const auto& bound = compression_.bound(op);
  if (!bound) return std::nullopt;
  const std::size_t n = static_cast<std::size_t>(t.numel());
  switch (t.scalar_type()) {
    case at::kFloat: return Compressed{*bound, DType::f32, n};
    case at::kDouble: return Compressed{*bound, DType::f64, n};
    case at::kComplexFloat: return Compressed{*bound, DType::f32, 2 * n};
    case at::kComplexDouble: return Compressed{*bound, DType::f64, 2 * n};
    default: return std::nullopt;  // zfp compresses float32 and float64
  }
}

std::string ProcessGroupChorus::compressed_backend(OpKind op) const {
  // all_reduce's "mpi:ring": the compressed ring is chorus's own, on mpi
  return group_.empty() ? plain_backend(backend_for(op)) : backend_for(op);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::run_compressed(c10d::OpType type, const char* title, OpKind op,
                                                                  std::vector<at::Tensor> keep, std::vector<at::Tensor> outputs,
                                                                  CompressedCall call, std::function<void()> finish,
                                                                  std::vector<at::Tensor> staging) {
  const std::string backend = compressed_backend(op);
  rt::Work w;
  if (const auto it = compressors_.find(backend); it != compressors_.end()) {
    using Lane = rt::compressed::Compressor::LaneKind;
    w = it->second->run(title, std::move(call), nullptr,
                        op == OpKind::send ? Lane::send : op == OpKind::recv ? Lane::recv : Lane::collective);
  } else {
    rt::compressed::Stats st;
    call(backend, &st);
    std::lock_guard lock(stats_mutex_);
    stats_.raw_bytes += st.raw_bytes;
    stats_.wire_bytes += st.wire_bytes;
  }
  return WorkChorus::make(rank_, type, title, std::move(w), std::move(keep), std::move(outputs), std::move(finish), pool_,
                          std::move(staging));
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

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::broadcast(std::vector<at::Tensor>& tensors,
                                                            const c10d::BroadcastOptions& opts) {
  at::Tensor& t = single(tensors, "broadcast", "tensor");
  check_rank(static_cast<int>(opts.rootRank), size_, "broadcast", "src");
  TORCH_CHECK_VALUE(opts.rootTensor == 0, "chorus: broadcast: root tensor ", opts.rootTensor, " (one tensor per process)");
  auto w = fused(nbytes(t))
               ? fusion_->broadcast(backend_for(OpKind::broadcast), t.data_ptr(), nbytes(t), kBytes,
                                    static_cast<int>(opts.rootRank))
               : rt::broadcast(backend_for(OpKind::broadcast), t.data_ptr(), nbytes(t), kBytes,
                               static_cast<int>(opts.rootRank), true);
  return WorkChorus::make(rank_, c10d::OpType::BROADCAST, "chorus:broadcast", std::move(w), {t}, {t});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allreduce(std::vector<at::Tensor>& tensors,
                                                            const c10d::AllreduceOptions& opts) {
  at::Tensor& t = single(tensors, "all_reduce", "tensor");
  const Reduction r = reduction_of(t, opts.reduceOp, "all_reduce");
  const std::size_t count = count_of(t, r);
  if (auto c = compressed(OpKind::all_reduce, t); c && (r.op == rt::ReduceOp::sum || r.op == rt::ReduceOp::avg))
    return run_compressed(c10d::OpType::ALLREDUCE, "chorus:all_reduce", OpKind::all_reduce, {t}, {t},
                          [p = t.data_ptr(), c = *c, op = r.op](const std::string& b, rt::compressed::Stats* st) {
                            rt::compressed::all_reduce(b, p, p, c.count, c.dtype, op, c.bound, st);
                          });
  auto w = fused(count * rt::dtype_bytes(r.dtype))
               ? fusion_->all_reduce(backend_for(OpKind::all_reduce), t.data_ptr(), t.data_ptr(), count, r.dtype, r.op)
               : rt::all_reduce(backend_for(OpKind::all_reduce), t.data_ptr(), t.data_ptr(), count, r.dtype, r.op, true);
  return WorkChorus::make(rank_, c10d::OpType::ALLREDUCE, "chorus:all_reduce", std::move(w), {t}, {t});
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
  if (auto c = compressed(OpKind::all_reduce, flat); c && (r.op == rt::ReduceOp::sum || r.op == rt::ReduceOp::avg)) {
    return run_compressed(c10d::OpType::ALLREDUCE_COALESCED, "chorus:all_reduce_coalesced", OpKind::all_reduce, tensors,
                          tensors,
                          [p = flat.data_ptr(), c = *c, op = r.op](const std::string& b, rt::compressed::Stats* st) {
                            rt::compressed::all_reduce(b, p, p, c.count, c.dtype, op, c.bound, st);
                          },
                          [flat, tensors]() mutable { unflatten(flat, tensors); }, {flat});
  }
  auto w = rt::all_reduce(backend_for(OpKind::all_reduce), flat.data_ptr(), flat.data_ptr(), count_of(flat, r), r.dtype,
                          r.op, true);
  return WorkChorus::make(rank_, c10d::OpType::ALLREDUCE_COALESCED, "chorus:all_reduce_coalesced", std::move(w), tensors,
                          tensors, [flat, tensors]() mutable { unflatten(flat, tensors); }, pool_, {flat});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::reduce(std::vector<at::Tensor>& tensors,
                                                         const c10d::ReduceOptions& opts) {
  at::Tensor& t = single(tensors, "reduce", "tensor");
  check_rank(static_cast<int>(opts.rootRank), size_, "reduce", "dst");
  TORCH_CHECK_VALUE(opts.rootTensor == 0, "chorus: reduce: root tensor ", opts.rootTensor, " (one tensor per process)");
  const Reduction r = reduction_of(t, opts.reduceOp, "reduce");
  const std::size_t count = count_of(t, r);
  auto w = fused(count * rt::dtype_bytes(r.dtype))
               ? fusion_->reduce(backend_for(OpKind::reduce), t.data_ptr(), t.data_ptr(), count, r.dtype,
                                 r.op, static_cast<int>(opts.rootRank))
               : rt::reduce(backend_for(OpKind::reduce), t.data_ptr(), t.data_ptr(), count, r.dtype, r.op,
                            static_cast<int>(opts.rootRank), true);
  return WorkChorus::make(rank_, c10d::OpType::REDUCE, "chorus:reduce", std::move(w), {t}, {t});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                            std::vector<at::Tensor>& inputs,
                                                            const c10d::AllgatherOptions&) {
  at::Tensor& in = single(inputs, "all_gather", "input");
  TORCH_CHECK_VALUE(outputs.size() == 1 && outputs[0].size() == static_cast<std::size_t>(size_),
                    "chorus: all_gather: expected one list of ", size_, " output tensors (one per rank)");
  for (std::size_t j = 0; j < outputs[0].size(); ++j) {
    check_tensor(outputs[0][j], "all_gather", fmt::format("tensor_list[{}]", j));
    same_shape(in, outputs[0][j], "all_gather", fmt::format("tensor_list[{}]", j));
  }
  at::Tensor flat = pool_->take(static_cast<std::int64_t>(size_) * in.numel(), in.scalar_type());
  std::vector<at::Tensor> outs = outputs[0];
  if (auto c = compressed(OpKind::all_gather, in)) {
    return run_compressed(c10d::OpType::ALLGATHER, "chorus:all_gather", OpKind::all_gather, {in}, outs,
                          [i = in.data_ptr(), o = flat.data_ptr(), c = *c](const std::string& b, rt::compressed::Stats* st) {
                            rt::compressed::all_gather(b, i, o, c.count, c.dtype, c.bound, st);
                          },
                          [flat, outs]() mutable { unflatten(flat, outs); }, {flat});
  }
  auto w = rt::all_gather(backend_for(OpKind::all_gather), in.data_ptr(), flat.data_ptr(), nbytes(in), kBytes, true);
  return WorkChorus::make(rank_, c10d::OpType::ALLGATHER, "chorus:all_gather", std::move(w), {in}, outs,
                          [flat, outs]() mutable { unflatten(flat, outs); }, pool_, {flat});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                  const c10d::AllgatherOptions&) {
  check_tensor(input, "all_gather_into_tensor", "input");
  check_tensor(output, "all_gather_into_tensor", "output");
  same_kind(input, output, "all_gather_into_tensor", "output");
  TORCH_CHECK_VALUE(output.numel() == size_ * input.numel(), "chorus: all_gather_into_tensor: output has ",
                    output.numel(), " elements, expected world size ", size_, " x input ", input.numel());
  if (auto c = compressed(OpKind::all_gather, input))
    return run_compressed(c10d::OpType::_ALLGATHER_BASE, "chorus:all_gather_into_tensor", OpKind::all_gather,
                          {input, output}, {output},
                          [i = input.data_ptr(), o = output.data_ptr(), c = *c](const std::string& b, rt::compressed::Stats* st) {
                            rt::compressed::all_gather(b, i, o, c.count, c.dtype, c.bound, st);
                          });
  auto w = fused(nbytes(input))
               ? fusion_->all_gather(backend_for(OpKind::all_gather), input.data_ptr(), output.data_ptr(),
                                     nbytes(input), kBytes)
               : rt::all_gather(backend_for(OpKind::all_gather), input.data_ptr(), output.data_ptr(), nbytes(input), kBytes,
                                true);
  return WorkChorus::make(rank_, c10d::OpType::_ALLGATHER_BASE, "chorus:all_gather_into_tensor", std::move(w),
                          {input, output}, {output});
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
  auto w = rt::all_gather(backend_for(OpKind::all_gather), in.data_ptr(), flat.data_ptr(), nbytes(in), kBytes, true);
  return WorkChorus::make(rank_, c10d::OpType::ALLGATHER_COALESCED, "chorus:all_gather_coalesced", std::move(w), {}, outs,
                          [flat, outs]() mutable { unflatten(flat, outs); }, pool_, {in, flat});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                         std::vector<at::Tensor>& inputs,
                                                         const c10d::GatherOptions& opts) {
  at::Tensor& in = single(inputs, "gather", "input");
  const int root = static_cast<int>(opts.rootRank);
  check_rank(root, size_, "gather", "dst");
  std::vector<at::Tensor> outs;
  at::Tensor flat;
  if (rank_ == root) {
    TORCH_CHECK_VALUE(outputs.size() == 1 && outputs[0].size() == static_cast<std::size_t>(size_),
                      "chorus: gather: the destination expects one list of ", size_, " output tensors");
    for (std::size_t j = 0; j < outputs[0].size(); ++j) {
      check_tensor(outputs[0][j], "gather", fmt::format("gather_list[{}]", j));
      same_shape(in, outputs[0][j], "gather", fmt::format("gather_list[{}]", j));
    }
    outs = outputs[0];
    flat = pool_->take(static_cast<std::int64_t>(size_) * in.numel(), in.scalar_type());
  } else {
    TORCH_CHECK_VALUE(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                      "chorus: gather: only the destination (rank ", root, ") gives output tensors");
  }
  void* gathered = flat.defined() ? flat.data_ptr() : nullptr;
  auto w = fused(nbytes(in)) ? fusion_->gather(backend_for(OpKind::gather), in.data_ptr(), gathered,
                                               nbytes(in), kBytes, root)
                             : rt::gather(backend_for(OpKind::gather), in.data_ptr(), gathered, nbytes(in), kBytes, root, true);
  std::function<void()> finish;
  if (flat.defined()) finish = [flat, outs]() mutable { unflatten(flat, outs); };
  std::vector<at::Tensor> staging;
  if (flat.defined()) staging.push_back(flat);
  return WorkChorus::make(rank_, c10d::OpType::GATHER, "chorus:gather", std::move(w), {in}, outs, std::move(finish), pool_,
                          std::move(staging));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::scatter(std::vector<at::Tensor>& outputs,
                                                          std::vector<std::vector<at::Tensor>>& inputs,
                                                          const c10d::ScatterOptions& opts) {
  at::Tensor& out = single(outputs, "scatter", "output");
  const int root = static_cast<int>(opts.rootRank);
  check_rank(root, size_, "scatter", "src");
  at::Tensor flat;
  if (rank_ == root) {
    TORCH_CHECK_VALUE(inputs.size() == 1 && inputs[0].size() == static_cast<std::size_t>(size_),
                      "chorus: scatter: the source expects one list of ", size_, " input tensors");
    for (std::size_t j = 0; j < inputs[0].size(); ++j) {
      check_tensor(inputs[0][j], "scatter", fmt::format("scatter_list[{}]", j));
      same_shape(out, inputs[0][j], "scatter", fmt::format("scatter_list[{}]", j));
    }
    flat = flatten(inputs[0], *pool_);
  } else {
    TORCH_CHECK_VALUE(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                      "chorus: scatter: only the source (rank ", root, ") gives input tensors");
  }
  const void* blocks = flat.defined() ? flat.data_ptr() : nullptr;
  auto w = fused(nbytes(out)) ? fusion_->scatter(backend_for(OpKind::scatter), blocks, out.data_ptr(),
                                                 nbytes(out), kBytes, root)
                              : rt::scatter(backend_for(OpKind::scatter), blocks, out.data_ptr(), nbytes(out), kBytes, root, true);
  std::vector<at::Tensor> staging;
  if (flat.defined()) staging.push_back(flat);
  return WorkChorus::make(rank_, c10d::OpType::SCATTER, "chorus:scatter", std::move(w), {out}, {out}, {}, pool_,
                          std::move(staging));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                 std::vector<std::vector<at::Tensor>>& inputs,
                                                                 const c10d::ReduceScatterOptions& opts) {
  at::Tensor& out = single(outputs, "reduce_scatter", "output");
  TORCH_CHECK_VALUE(inputs.size() == 1 && inputs[0].size() == static_cast<std::size_t>(size_),
                    "chorus: reduce_scatter: expected one list of ", size_, " input tensors (one per rank)");
  for (std::size_t j = 0; j < inputs[0].size(); ++j) {
    check_tensor(inputs[0][j], "reduce_scatter", fmt::format("input_list[{}]", j));
    same_shape(out, inputs[0][j], "reduce_scatter", fmt::format("input_list[{}]", j));
  }
  const Reduction r = reduction_of(out, opts.reduceOp, "reduce_scatter");
  at::Tensor flat = flatten(inputs[0], *pool_);
  auto w = rt::reduce_scatter(backend_for(OpKind::reduce_scatter), flat.data_ptr(), out.data_ptr(), count_of(out, r),
                              r.dtype, r.op, true);
  return WorkChorus::make(rank_, c10d::OpType::REDUCE_SCATTER, "chorus:reduce_scatter", std::move(w), {out}, {out}, {},
                          pool_, {flat});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                       const c10d::ReduceScatterOptions& opts) {
  check_tensor(input, "reduce_scatter_tensor", "input");
  check_tensor(output, "reduce_scatter_tensor", "output");
  same_kind(output, input, "reduce_scatter_tensor", "input");
  TORCH_CHECK_VALUE(input.numel() == size_ * output.numel(), "chorus: reduce_scatter_tensor: input has ", input.numel(),
                    " elements, expected world size ", size_, " x output ", output.numel());
  const Reduction r = reduction_of(output, opts.reduceOp, "reduce_scatter_tensor");
  auto w = fused(nbytes(output))
               ? fusion_->reduce_scatter(backend_for(OpKind::reduce_scatter), input.data_ptr(),
                                         output.data_ptr(), count_of(output, r), r.dtype, r.op)
               : rt::reduce_scatter(backend_for(OpKind::reduce_scatter), input.data_ptr(), output.data_ptr(),
                                    count_of(output, r), r.dtype, r.op, true);
  return WorkChorus::make(rank_, c10d::OpType::_REDUCE_SCATTER_BASE, "chorus:reduce_scatter_tensor", std::move(w),
                          {input, output}, {output});
}

namespace {

// Byte counts and displacements of an all_to_all_single side: `splits` rows per rank (empty:
// equal parts) of a tensor whose first dimension is split.
void split_bytes(const at::Tensor& t, const std::vector<std::int64_t>& splits, int size, std::string_view side,
                 rt::Counts& counts, rt::Counts& displs) {
  const std::int64_t rows = t.dim() == 0 ? 1 : t.size(0);
  const std::size_t row_bytes = rows == 0 ? 0 : nbytes(t) / static_cast<std::size_t>(rows);
  counts.assign(static_cast<std::size_t>(size), 0);
  displs.assign(static_cast<std::size_t>(size), 0);
  if (splits.empty()) {
    TORCH_CHECK_VALUE(rows % size == 0, "chorus: all_to_all_single: ", side, " has ", rows,
                      " rows, not divisible by the world size ", size, " (give split sizes)");
    for (int j = 0; j < size; ++j) counts[static_cast<std::size_t>(j)] = static_cast<std::size_t>(rows / size) * row_bytes;
  } else {
    TORCH_CHECK_VALUE(splits.size() == static_cast<std::size_t>(size), "chorus: all_to_all_single: ", side,
                      "_split_sizes has ", splits.size(), " entries, the world size is ", size);
    std::int64_t sum = 0;
    for (int j = 0; j < size; ++j) {
      const std::int64_t s = splits[static_cast<std::size_t>(j)];
      TORCH_CHECK_VALUE(s >= 0, "chorus: all_to_all_single: ", side, "_split_sizes[", j, "] = ", s, " is negative");
      sum += s;
      counts[static_cast<std::size_t>(j)] = static_cast<std::size_t>(s) * row_bytes;
    }
    TORCH_CHECK_VALUE(sum == rows, "chorus: all_to_all_single: ", side, "_split_sizes sum to ", sum, ", the ", side,
                      " has ", rows, " rows");
  }
  for (std::size_t j = 1; j < counts.size(); ++j) displs[j] = displs[j - 1] + counts[j - 1];
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                                std::vector<std::int64_t>& output_splits,
                                                                std::vector<std::int64_t>& input_splits,
                                                                const c10d::AllToAllOptions&) {
  check_tensor(input, "all_to_all_single", "input");
  check_tensor(output, "all_to_all_single", "output");
  same_kind(input, output, "all_to_all_single", "output");
  const std::string& backend = backend_for(OpKind::all_to_all_single);
  rt::Work w;
  if (output_splits.empty() && input_splits.empty()) {
    TORCH_CHECK_VALUE(input.numel() == output.numel(), "chorus: all_to_all_single: output has ", output.numel(),
                      " elements, the input ", input.numel());
    rt::Counts c, d;
    split_bytes(input, {}, size_, "input", c, d);
    if (auto z = compressed(OpKind::all_to_all_single, input))
      return run_compressed(c10d::OpType::ALLTOALL_BASE, "chorus:all_to_all_single", OpKind::all_to_all_single,
                            {input, output}, {output},
                            [i = input.data_ptr(), o = output.data_ptr(), z = *z,
                             n = static_cast<std::size_t>(size_)](const std::string& b, rt::compressed::Stats* st) {
                              rt::compressed::all_to_all_single(b, i, o, z.count / n, z.dtype, z.bound, st);
                            });
    w = fused(c[0])
            ? fusion_->all_to_all_single(backend, input.data_ptr(), output.data_ptr(), c[0], kBytes)
            : rt::all_to_all_single(backend, input.data_ptr(), output.data_ptr(), c[0], kBytes, true);
  } else {
    rt::Counts sc, sd, rc, rd;
    split_bytes(input, input_splits, size_, "input", sc, sd);
    split_bytes(output, output_splits, size_, "output", rc, rd);
    // (all_to_allv takes no algorithm: "mpi:pairwise" of the map is mpi here). With fusion, every
    // one goes to it whatever its size: the sizes differ per rank, so only the fusion's agreement
    // can decide alike on every rank what runs alone.
    w = fusion_ ? fusion_->all_to_allv(plain_backend(backend), input.data_ptr(), sc, sd, output.data_ptr(), rc, rd, kBytes)
                : rt::all_to_allv(plain_backend(backend), input.data_ptr(), sc, sd, output.data_ptr(), rc, rd, kBytes, true);
  }
  return WorkChorus::make(rank_, c10d::OpType::ALLTOALL_BASE, "chorus:all_to_all_single", std::move(w), {input, output},
                          {output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::alltoall(std::vector<at::Tensor>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllToAllOptions&) {
  TORCH_CHECK_VALUE(inputs.size() == static_cast<std::size_t>(size_) && outputs.size() == inputs.size(),
                    "chorus: all_to_all: expected ", size_, " input and ", size_, " output tensors, got ", inputs.size(),
                    " and ", outputs.size());
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
  auto w = rt::all_to_all(backend_for(OpKind::all_to_all), ins, in_counts, outs, out_counts, kBytes, true);
  std::vector<at::Tensor> keep = inputs;
  keep.insert(keep.end(), outputs.begin(), outputs.end());
  return WorkChorus::make(rank_, c10d::OpType::ALLTOALL, "chorus:all_to_all", std::move(w), std::move(keep), outputs);
}

namespace {

void check_tag(int tag, std::string_view op) {
  TORCH_CHECK_VALUE(tag == 0, "chorus: ", op, ": tag ", tag,
                    ": tags are not supported (messages between two ranks match in the order they are issued); use "
                    "tag 0");
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::send(std::vector<at::Tensor>& tensors, int dst, int tag) {
  at::Tensor& t = single(tensors, "send", "tensor");
  check_rank(dst, size_, "send", "dst");
  check_tag(tag, "send");
  if (auto c = compressed(OpKind::send, t))
    return run_compressed(c10d::OpType::SEND, "chorus:send", OpKind::send, {t}, {t},
                          [p = t.data_ptr(), c = *c, dst](const std::string& b, rt::compressed::Stats* st) {
                            rt::compressed::send(b, p, c.count, c.dtype, dst, c.bound, st);
                          });
  auto w = rt::send(backend_for(OpKind::send), t.data_ptr(), nbytes(t), kBytes, dst, true);
  return WorkChorus::make(rank_, c10d::OpType::SEND, "chorus:send", std::move(w), {t}, {t});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::recv(std::vector<at::Tensor>& tensors, int src, int tag) {
  at::Tensor& t = single(tensors, "recv", "tensor");
  check_rank(src, size_, "recv", "src");
  check_tag(tag, "recv");
  if (auto c = compressed(OpKind::recv, t))
    return run_compressed(c10d::OpType::RECV, "chorus:recv", OpKind::recv, {t}, {t},
                          [p = t.data_ptr(), c = *c, src](const std::string& b, rt::compressed::Stats* st) {
                            rt::compressed::recv(b, p, c.count, c.dtype, src, c.bound, st);
                          });
  auto w = rt::recv(backend_for(OpKind::recv), t.data_ptr(), nbytes(t), kBytes, src, true);
  return WorkChorus::make(rank_, c10d::OpType::RECV, "chorus:recv", std::move(w), {t}, {t});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::recvAnysource(std::vector<at::Tensor>&, int) {
  TORCH_CHECK_VALUE(false, "chorus: recv without src (from any source) is not supported; give src");
  return {};
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::barrier(const c10d::BarrierOptions&) {
  auto w = rt::barrier(backend_for(OpKind::barrier), true);
  return WorkChorus::make(rank_, c10d::OpType::BARRIER, "chorus:barrier", std::move(w), {}, {});
}

}  // namespace chorus::torch_backend
