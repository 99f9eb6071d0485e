// Tensor fusion as a layer of the submission path: the runtime makes and owns fusions
// (Runtime::add_fusion) and gives them to communicators (rt/communicator_layers.cpp), whose
// issue() sends the calls the fusion takes (Fusion::takes) through it, the others on as without.
// Front ends translate their calls and issue them on such a communicator: none decides what is
// fused.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "rt/fusion/fusion.h"
#include "rt/runtime_instance.h"

namespace chorus::rt {

Fusion& Runtime::add_fusion(const std::vector<std::string>& backends, const FusionOptions& options) {
  auto fusion = std::make_unique<Fusion>(*this, backends, options);  // collective: makes its groups
  std::lock_guard lock(mutex_);
  fusions_.push_back(std::move(fusion));
  return *fusions_.back();
}

Communicator Runtime::communicator(std::string_view name, const FusionOptions& options) {
  std::string backend(name);
  if (name != "auto") {  // bad names and groups refused before anything is made
    const Communicator plain = communicator(name);
    if (!is_world_backend(plain))
      throw InputError(fmt::format("communicator '{}' with a fusion", name),
                       "a fusion runs on backends over the whole world, not on a group");
    backend = plain.state_->backend->name();
  }
  return communicator(name, add_fusion({backend}, options));
}

}  // namespace chorus::rt
