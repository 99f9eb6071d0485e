// ProcessGroupChorus's construction: the settings read from the environment (CHORUS_BACKEND_MAP,
// CHORUS_COMPRESSION, CHORUS_FUSION), the runtime initialised on torch's world or joined (a
// sub-group: rt::member_group) and the fusion; and its destruction.
#include "torch_backend/process_group.h"

#include <pybind11/pybind11.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"
#include "rt/runtime_instance.h"
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
  const CompressionMap compression =
      CompressionMap::parse(compression_text != nullptr ? compression_text : "", "environment CHORUS_COMPRESSION");
  if (compression.any()) {
    compression_ = std::make_shared<rt::CompressionPolicy>();
    for (CollectiveKind op : kAllCollectiveKinds)
      compression_->bounds[static_cast<std::size_t>(op)] = compression.bound(op);
  }
  std::optional<rt::FusionOptions> fusion;  // read before anything is initialised: a bad value leaves nothing behind
  if (const char* f = std::getenv("CHORUS_FUSION"); f != nullptr && *f != '\0' && std::string_view(f) != "0")
    fusion = rt::parse_fusion_options(f, "environment CHORUS_FUSION");
  if (!global_ranks.empty()) {  // a sub-group: only its members get here
    if (!rt::is_initialized())
      throw InputError("chorus process group", "a sub-group before the world group: call init_process_group first");
    std::vector<int> ranks(global_ranks.begin(), global_ranks.end());
    group_ = "torch/" + group_name;
    rt::member_group(group_, ranks, "auto");
    bind_communicators();
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
    rt::Runtime& made = rt::default_runtime("chorus process group");
    const std::string first = made.backends().front();
    if (made.rank(first) != rank || made.size(first) != size)
      throw InputError("chorus process group",
                       fmt::format("torch.distributed gives rank {} of {}, but the chorus runtime this program "
                                   "initialised is rank {} of {}",
                                   rank, size, made.rank(first), made.size(first)));
  }
  bind_communicators(fusion);
}

void ProcessGroupChorus::bind_communicators(const std::optional<rt::FusionOptions>& fusion) {
  runtime_ = &rt::default_runtime("chorus process group");
  rt::Fusion* fused = nullptr;
  if (fusion) {  // on the backends of the operations that fuse ("mpi:ring": mpi, that algorithm per fused buffer)
    std::vector<std::string> backends;
    for (CollectiveKind op : kAllCollectiveKinds)
      if (rt::fuses(op) &&
          std::find(backends.begin(), backends.end(), plain_backend(backend_for(op))) == backends.end())
        backends.push_back(plain_backend(backend_for(op)));
    fused = &runtime_->add_fusion(backends, *fusion);  // collective; ended by the runtime's finalize
  }
  for (CollectiveKind op : kAllCollectiveKinds) {
    const std::string backend = backend_for(op);
    const rt::CommunicatorLayers layers{compression_, rt::fuses(op) ? fused : nullptr};
    if (layers.compression != nullptr || layers.fusion != nullptr || plain_backend(backend) != "auto")
      comms_[static_cast<std::size_t>(op)] = runtime_->communicator(backend, layers);
  }
}

ProcessGroupChorus::~ProcessGroupChorus() {
  // Destroying the group waits for chorus's threads: the fusion's and the runtime's lanes
  // (finalize(), which ends the fusion first). One of them may be ending an operation whose WorkChorus it holds
  // last, and freeing a tensor Python has seen takes the GIL. Python destroys the group with the
  // GIL held (pybind11's dealloc), so the waits give it up; a destruction on a thread without it
  // (the last reference dropped in C++) has nothing to give up.
  std::optional<pybind11::gil_scoped_release> no_gil;
  if (Py_IsInitialized() != 0 && PyGILState_Check() != 0) no_gil.emplace();
  if (!owns_runtime_) return;
  try {
    rt::finalize();
  } catch (...) {  // a destructor must not throw; finalize leaves a broken backend alive itself
  }
}

void ProcessGroupChorus::abort(const std::string& why) { runtime_->abort(why); }

}  // namespace chorus::torch_backend
