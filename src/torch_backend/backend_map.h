#pragma once
// Which chorus backend runs each torch.distributed operation of the "chorus" process group
// (MCR-DL's per-operation backend choice, for programs that cannot name a backend per call):
//
//   CHORUS_BACKENDS="shm,gloo"                     the backends to initialise
//   CHORUS_BACKEND_MAP="all_reduce:shm,all_to_all:mpi,*:auto"
//
// Map entries are op:backend, separated by commas; op is a runtime operation name
// (all_reduce, all_to_all_single, ... or the nccl-tests short names) or * for every other
// operation. A backend is mpi, gloo, shm or auto (chosen per operation and message size from the
// tuning table, CHORUS_RT_TUNING). Unlisted operations use auto. send and recv always share one
// backend (naming either names both).
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "rt/types.h"

namespace chorus::torch_backend {

class BackendMap {
 public:
  BackendMap();
  // Throws InputError naming `where` and the bad entry (its position, the text, what is wanted).
  static BackendMap parse(std::string_view text, const std::string& where);
  const std::string& backend(CollectiveKind op) const { return by_op_[static_cast<std::size_t>(op)]; }
  // Every backend a map entry names (not auto), in order of first mention.
  std::vector<std::string> named_backends() const;

 private:
  std::array<std::string, std::size(kAllCollectiveKinds)> by_op_;
};

// The backends to initialise: CHORUS_BACKENDS's list when given (`env_value` non-null and not
// blank) plus the backends the map names; else "auto", which the runtime expands to every
// backend that works under the launcher (mpi only under mpirun, shm only on one host). Throws
// InputError for an unknown or repeated name.
std::vector<std::string> backends_to_init(const char* env_value, const BackendMap& map);

}  // namespace chorus::torch_backend
