// A communicator's layers (runtime.h's CommunicatorLayers): made with them
// (Runtime::communicator(name, layers)), and its issue() through them, in order: the compression
// policy (rt/compression/call_compression.h: which calls travel compressed), then the fusion
// (rt/fusion/fusion.h: Fusion::takes, the one rule of what is fused), then the runtime as without.
// The front ends translate their calls and issue them on such communicators: none decides.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "rt/compression/call_compression.h"
#include "rt/fusion/fusion.h"
#include "rt/runtime_instance.h"

namespace chorus::rt {

namespace {

// Whether `state` is a backend over the whole world (a fusion splits its groups from those), not a group.
bool over_world(const std::map<std::string, std::unique_ptr<CommunicatorState>>& communicators,
                const CommunicatorState* state) {
  const auto it = communicators.find(state->backend->name());
  return it != communicators.end() && it->second.get() == state;
}

}  // namespace

// With a fusion: that it is this runtime's and runs on the communicator's backend (on every
// backend for "auto"); a group is refused.
void Runtime::check_fusion_of(std::string_view name, const Fusion& fusion, const CommunicatorState& state) {
  const std::string where = fmt::format("communicator '{}' with a fusion", name);
  std::lock_guard lock(mutex_);
  if (std::none_of(fusions_.begin(), fusions_.end(), [&](const auto& f) { return f.get() == &fusion; }))
    throw InputError(where, "the fusion is not one of this runtime's (Runtime::add_fusion makes them)");
  const auto& on = fusion.backends();
  if (name == "auto") {
    for (const auto& b : order_)
      if (std::find(on.begin(), on.end(), b) == on.end())
        throw InputError(where, fmt::format("'auto' may choose backend '{}', which the fusion does not run on ({})", b,
                                            fmt::join(on, ", ")));
    return;
  }
  if (!over_world(communicators_, &state))
    throw InputError(where, "a fusion runs on backends over the whole world, not on a group");
  const std::string backend = state.backend->name();
  if (std::find(on.begin(), on.end(), backend) == on.end())
    throw InputError(where, fmt::format("the fusion runs on {}, not on backend '{}'", fmt::join(on, ", "), backend));
}

Communicator Runtime::communicator(std::string_view name, const CommunicatorLayers& layers) {
  if (layers.fusion == nullptr && layers.compression == nullptr) return communicator(name);
  const bool is_auto = name == "auto";
  // "auto": its rank, size and life are every backend's, the world's.
  Communicator h = communicator(is_auto ? std::string_view(order_.front()) : name);
  if (layers.fusion != nullptr) check_fusion_of(name, *layers.fusion, *h.state_);
  if (is_auto) {
    h.name_ = "auto";
    h.auto_ = true;
  }
  h.fusion_ = layers.fusion;
  h.compression_ = layers.compression;
  h.layered_ = true;
  return h;
}

// Whether `c` is a backend over the whole world, not a group (Runtime::communicator(name,
// FusionOptions) refuses groups before it makes a fusion).
bool Runtime::is_world_backend(const Communicator& c) {
  std::lock_guard lock(mutex_);
  return over_world(communicators_, c.state_);
}

Work Communicator::issue_layered(Call call, bool async_op) const {
  if (compression_ != nullptr) call = compression_->apply(std::move(call));
  if (fusion_ != nullptr && fusion_->takes(call)) {
    // The communicator's algorithm for the operations that take one ("gloo:ring"), else its backend.
    const bool named = !algorithm_.empty() && takes_algorithm(call.op);
    if (named && algorithms_[static_cast<std::size_t>(call.op)] == kMissing) [[unlikely]]
      throw_missing_algorithm(call.op);
    const std::string& on = named || auto_ ? name_ : state_->label;  // a world backend's label: its name
    Work w = fusion_->issue(on, std::move(call), /*start_now=*/!async_op);
    if (!async_op) w.wait();  // throws its error, as a blocking call does
    return w;
  }
  if (auto_) return runtime_->issue(std::string_view("auto"), std::move(call), async_op);
  return runtime_->issue(*this, std::move(call), async_op);
}

}  // namespace chorus::rt
