// Tensor fusion as a layer of the submission path: the runtime makes and owns fusions
// (Runtime::add_fusion), a communicator is given one (Runtime::communicator(name, fusion)), and
// its issue() sends the calls the fusion takes (Fusion::takes) through it, the others on as
// without. Front ends translate their calls and issue them on such a communicator: none decides
// what is fused.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
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

namespace {

// Whether `state` is a backend over the whole world (a fusion splits its groups from those), not a group.
bool over_world(const std::map<std::string, std::unique_ptr<CommunicatorState>>& communicators,
                const CommunicatorState* state) {
  const auto it = communicators.find(state->backend->name());
  return it != communicators.end() && it->second.get() == state;
}

[[noreturn]] void throw_group(std::string_view name) {
  throw InputError(fmt::format("communicator '{}' with a fusion", name),
                   "a fusion runs on backends over the whole world, not on a group");
}

}  // namespace

Fusion& Runtime::add_fusion(const std::vector<std::string>& backends, const FusionOptions& options) {
  auto fusion = std::make_unique<Fusion>(*this, backends, options);  // collective: makes its groups
  std::lock_guard lock(mutex_);
  fusions_.push_back(std::move(fusion));
  return *fusions_.back();
}

Communicator Runtime::communicator(std::string_view name, Fusion& fusion) {
  const std::string where = fmt::format("communicator '{}' with a fusion", name);
  {
    std::lock_guard lock(mutex_);
    if (std::none_of(fusions_.begin(), fusions_.end(), [&](const auto& f) { return f.get() == &fusion; }))
      throw InputError(where, "the fusion is not one of this runtime's (Runtime::add_fusion makes them)");
  }
  const auto& on = fusion.backends();
  Communicator h;
  if (name == "auto") {
    for (const auto& b : order_)
      if (std::find(on.begin(), on.end(), b) == on.end())
        throw InputError(where, fmt::format("'auto' may choose backend '{}', which the fusion does not run on ({})", b,
                                            fmt::join(on, ", ")));
    h = communicator(order_.front());  // its rank, size and life: every backend's are the world's
    h.name_ = "auto";
    h.auto_ = true;
  } else {
    h = communicator(name);
    {
      std::lock_guard lock(mutex_);
      if (!over_world(communicators_, h.state_)) throw_group(name);
    }
    const std::string& backend = h.state_->backend->name();
    if (std::find(on.begin(), on.end(), backend) == on.end())
      throw InputError(where, fmt::format("the fusion runs on {}, not on backend '{}'", fmt::join(on, ", "), backend));
  }
  h.fusion_ = &fusion;
  return h;
}

Communicator Runtime::communicator(std::string_view name, const FusionOptions& options) {
  std::string backend(name);
  if (name != "auto") {  // bad names and groups refused before anything is made
    const Communicator plain = communicator(name);
    std::lock_guard lock(mutex_);
    if (!over_world(communicators_, plain.state_)) throw_group(name);
    backend = plain.state_->backend->name();
  }
  return communicator(name, add_fusion({backend}, options));
}

Work Communicator::issue_layered(Call call, bool async_op) const {
  if (fusion_->takes(call)) {
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
