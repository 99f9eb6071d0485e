#pragma once
// ProcessGroupChorus: the chorus runtime as a torch.distributed backend (c10d::ProcessGroup of
// torch 1.13), so that an unchanged program's dist.init_process_group("chorus") runs every
// torch.distributed operation on mpi, gloo, shm or auto, chosen per operation (BackendMap).
//
// - The first (world) process group initialises the runtime on the world torch found: its rank,
//   size and store (rt::ExternalWorld), under torchrun, chorus launch or mpirun alike; it
//   finalises the runtime when it is destroyed. A runtime the program initialised itself
//   (chorus.init) is used as it is.
// - Every operation is issued asynchronously on its backend's progress queue; its WorkChorus
//   completes (and its future, which DistributedDataParallel's reducer uses, is marked) on the
//   thread that finishes it.
// - Data movement (broadcast, gathers, scatter, all-to-all, send/recv) is dtype-blind: bytes.
//   Reductions take float16, bfloat16, float32, float64, int8, uint8, int32, int64, bool (SUM as
//   logical or, PRODUCT as logical and, as NCCL does) and complex (SUM, AVG: on the real and
//   imaginary parts) with SUM, AVG, PRODUCT, MIN, MAX.
// - Tensors must be CPU, dense and contiguous; otherwise, and for every other misuse (sizes,
//   roots, dtypes), the call throws before anything is sent, naming the operation and argument.
// - CHORUS_COMPRESSION (CompressionMap) sends float tensors of all_reduce (SUM, AVG), all_gather,
//   all_to_all_single (equal splits), send and recv as zfp blocks under an error bound
//   (rt/compression/call_compression.h): the map becomes the communicators' compression policy
//   (rt::CompressionPolicy, a layer of their submission path), which decides per call; the
//   runtime's operation with compression as its option, asynchronous and in the order of the
//   backend's other operations like any other.
//
// - CHORUS_FUSION=B,T (world group only) gives the communicators of the operations that fuse a
//   tensor fusion (rt/fusion/fusion.h) made on the runtime: the runtime decides, per call, what
//   goes through it (Fusion::takes); this front end only translates.
//
// Every operation reads alike, as ProcessGroupMPI's do: check its arguments (torch_args.h), build
// its rt::Call (in float elements where its communicator compresses its kind: compress()), and
// issue() it on its communicator, wrapped in its WorkChorus (work_chorus.h).
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rt/call.h"
#include "rt/compression/call_compression.h"
#include "rt/fusion/fusion.h"
#include "rt/runtime.h"
#include "rt/work.h"
#include "torch_backend/backend_map.h"
#include "torch_backend/compression_map.h"
#include "torch_backend/work_chorus.h"

namespace chorus::torch_backend {

class ProcessGroupChorus : public c10d::ProcessGroup {
 public:
  // `global_ranks`: the world ranks of this group's members (empty: the world group). The world
  // group initialises the runtime (`timeout_s` becomes its operation timeout); any other group
  // is a runtime group made by its members alone (rt::member_group, named "torch/<group_name>",
  // on shm when the world is on one host, else gloo) that runs all of the group's operations.
  ProcessGroupChorus(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, double timeout_s,
                     const std::vector<std::int64_t>& global_ranks, const std::string& group_name);
  ~ProcessGroupChorus() override;
  const std::string getBackendName() const override { return "chorus"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<std::int64_t>& output_splits,
                                               std::vector<std::int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

  // The chorus backend that runs `op`: a backend name or auto, with the map's named algorithm
  // ("mpi:ring") only for the operations that take one. torch's all_to_all_single of uneven
  // splits is the runtime's all_to_allv: it follows the map's all_to_all_single entry.
  std::string backend_for(CollectiveKind op) const;
  // What the compressed operations of this group sent, and would have sent uncompressed.
  rt::compressed::Stats compression_stats() const {
    return compression_ != nullptr ? compression_->totals.get() : rt::compressed::Stats{};
  }
  // The abort path torch 1.13 lacks (its ProcessGroup has no abort): rt::abort on the runtime
  // every group of the process runs on. Operations in flight on shm and gloo end with the
  // reason, an mpi one ends the job, and every later call fails naming it; destroy the group
  // and exit next.
  void abort(const std::string& why);

 private:
  // One operation as its method builds it for issue(): its Work's type and title, the runtime
  // operation it is (`call`, run on backend_for(call.op)), the tensors it holds until it ends
  // (`keep`) and reports (`outputs`), what runs once it has succeeded (`finish`: copies out of a
  // staging buffer) and the staging buffers it lets go when it ends (as in WorkChorus::make).
  struct TorchOp {
    c10d::OpType type;
    const char* title;
    rt::Call call;
    std::vector<at::Tensor> keep;
    std::vector<at::Tensor> outputs;
    std::function<void()> finish = {};
    std::vector<at::Tensor> staging = {};
  };
  // Issues `op` asynchronously on its communicator (comms_; "auto" on the runtime by name).
  c10::intrusive_ptr<c10d::Work> issue(TorchOp op);
  // The translation compression needs from torch: where the communicator's compression policy
  // names `call`'s kind and `t` (the data it sends per rank; all_to_all_single: the whole input)
  // holds floats, the call's count and dtype become t's float elements (a complex tensor's real
  // and imaginary parts), since the call of a data movement counts bytes; the policy decides
  // the rest (rt::CompressionPolicy). Otherwise leaves it.
  void compress(rt::Call& call, const at::Tensor& t);
  // Resolves every operation's communicator once (comms_), when the group is set up, with the
  // compression policy (CHORUS_COMPRESSION) and, with `fusion` (CHORUS_FUSION), one fusion on the
  // runtime for the backends of the operations that fuse, given to their communicators.
  void bind_communicators(const std::optional<rt::FusionOptions>& fusion = std::nullopt);

  // The process's default runtime (the one the Python module's functions use too): what every
  // operation of the group runs on.
  rt::Runtime* runtime_ = nullptr;
  // Per operation kind, the communicator backend_for(op) names, resolved once; none (an empty
  // name) where it is auto, which the runtime chooses per call by the message's size, unless the
  // communicator has layers (an "auto" communicator with the fusion or the compression policy).
  std::array<rt::Communicator, std::size(kAllCollectiveKinds)> comms_;
  BackendMap map_;
  // CHORUS_COMPRESSION as the communicators' policy (null when it names nothing); its totals are
  // added to on the runtime's lanes.
  std::shared_ptr<rt::CompressionPolicy> compression_;
  std::string group_;  // the runtime group of a sub-group; empty for the world group
  bool owns_runtime_ = false;
  StagingPool pool_;
};

}  // namespace chorus::torch_backend
