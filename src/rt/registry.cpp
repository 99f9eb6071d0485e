// Names to communicators: the backends and groups of a runtime, "auto" (the tuning table, else
// the first backend) and "backend:algorithm".
#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "rt/runtime_instance.h"

namespace chorus::rt {

std::string Runtime::pick_backend(CollectiveKind op, std::size_t bytes) const {
  // Vector forms and point-to-point have no rank-uniform size, so they use the default;
  // every rank must pick the same backend.
  if (tuning_ && traits(op).uniform_count)
    if (auto b = tuning_->pick(op, world_.size, bytes, order_)) return *b;
  return order_.front();
}

// "auto", names with an algorithm, and unknown names.
CommunicatorState& Runtime::find_slow(std::string_view name, CollectiveKind op, std::size_t bytes,
                                      std::size_t* algorithm) {
  std::lock_guard lock(mutex_);
  // A name with an algorithm: the exact name first (group names may hold ':'), else the part
  // before the last ':' names the backend or group, the rest the algorithm.
  std::string base = name == "auto" ? pick_backend(op, bytes) : std::string(name);
  std::string named;
  if (const auto colon = base.rfind(':'); colon != std::string::npos && communicators_.count(base) == 0) {
    named = base.substr(colon + 1);
    base.resize(colon);
  }
  const std::string where = fmt::format("{} on rank {}", to_string(op), world_.rank);
  auto it = communicators_.find(base);
  if (it == communicators_.end() && std::find(not_member_.begin(), not_member_.end(), base) != not_member_.end())
    throw InputError(where, fmt::format("this rank is not a member of group '{}'", base));
  if (it != communicators_.end() && !named.empty()) {
    if (algorithm == nullptr)
      throw InputError(where, fmt::format("'{}': {} takes no algorithm after the backend name (those that do: {})",
                                          name, to_string(op), kAlgorithmOps));
    // rank() and size() (as barrier) accept a name with any operation's algorithm.
    std::vector<std::string> names = it->second->algorithms_of(op);
    if (op == CollectiveKind::kBarrier)
      for (const auto& list : it->second->algorithms) names.insert(names.end(), list.begin(), list.end());
    const auto a = std::find(names.begin(), names.end(), named);
    if (named == "default") {
      *algorithm = 0;
    } else if (a == names.end()) {
      throw InputError(where, fmt::format("'{}': {} has no {} algorithm '{}' (it has: default{}{})", name, base,
                                          to_string(op), named, names.empty() ? "" : ", ", fmt::join(names, ", ")));
    } else {
      *algorithm = op == CollectiveKind::kBarrier ? 0 : static_cast<std::size_t>(a - names.begin()) + 1;
    }
  }
  if (it == communicators_.end()) {
    const auto& known = known_backends();
    throw InputError(
        where, std::find(known.begin(), known.end(), base) != known.end()
                   ? fmt::format("backend '{}' is not initialised (initialised: {})", name, fmt::join(order_, ", "))
                   : fmt::format("unknown backend '{}' (available: {}, auto; initialised: {})", name,
                                 fmt::join(known, ", "), fmt::join(order_, ", ")));
  }
  return *it->second;
}

Communicator Runtime::communicator(std::string_view name) {
  if (name == "auto")
    throw InputError("communicator",
                     "'auto' is not a communicator: it chooses a backend per call (name a backend "
                     "or group, with an algorithm if you want one: gloo:ring)");
  // As rank() looks it up: unknown names, groups this rank is not in and algorithms no
  // operation of the backend has are refused here, worded as for a call.
  std::size_t ignored = 0;
  CommunicatorState& c = find(name, CollectiveKind::kBarrier, 0, &ignored);
  Communicator h;
  h.runtime_ = this;
  h.alive_ = alive_;
  h.state_ = &c;
  h.name_ = std::string(name);
  {
    std::lock_guard lock(mutex_);
    if (const auto colon = h.name_.rfind(':'); colon != std::string::npos && communicators_.count(h.name_) == 0)
      h.algorithm_ = h.name_.substr(colon + 1);
  }
  if (h.algorithm_.empty() || h.algorithm_ == "default") return h;
  for (CollectiveKind op : kAllCollectiveKinds) {
    if (!takes_algorithm(op)) continue;
    const auto& names = c.algorithms_of(op);
    const auto a = std::find(names.begin(), names.end(), h.algorithm_);
    h.algorithms_[static_cast<std::size_t>(op)] =
        a == names.end() ? Communicator::kMissing : static_cast<std::size_t>(a - names.begin()) + 1;
  }
  return h;
}

void Communicator::throw_missing_algorithm(CollectiveKind op) const {
  const CommunicatorState& c = *state_;
  const auto& names = c.algorithms_of(op);
  throw InputError(
      fmt::format("{} on rank {}", to_string(op), c.backend->rank()),
      fmt::format("communicator '{}': {} has no {} algorithm '{}' (it has: default{}{})", name_, c.backend->name(),
                  to_string(op), algorithm_, names.empty() ? "" : ", ", fmt::join(names, ", ")));
}

const CommunicatorState& Communicator::state(std::string_view what) const {
  if (state_ == nullptr) throw InputError(std::string(what), "no communicator (made by rt::communicator(name))");
  if (alive_.expired())
    throw InputError(std::string(what),
                     fmt::format("communicator '{}' is used after its runtime ended (finalize())", name_));
  return *state_;
}

int Communicator::rank() const { return state("rank").backend->rank(); }
int Communicator::size() const { return state("size").world_size; }

std::string Communicator::resolve(CollectiveKind op) const {
  const CommunicatorState& c = state(to_string(op));
  const std::size_t a = takes_algorithm(op) ? algorithms_[static_cast<std::size_t>(op)] : 0;
  if (a == kMissing) throw_missing_algorithm(op);
  const Backend& b = *c.backend;
  return a == 0 ? b.name() : b.name() + ":" + c.algorithms_of(op)[a - 1];
}

Work Communicator::issue(Call call, bool async_op) const {
  state(to_string(call.op));
  return runtime_->issue(*this, std::move(call), async_op);
}

// A name with an all_reduce algorithm ("mpi:ring") gives its backend's size and rank.
int Runtime::size(std::string_view name) {
  std::size_t algorithm = 0;
  return find(name, CollectiveKind::kBarrier, 0, &algorithm).backend->size();
}

int Runtime::rank(std::string_view name) {
  std::size_t algorithm = 0;
  return find(name, CollectiveKind::kBarrier, 0, &algorithm).backend->rank();
}

std::string Runtime::resolve_backend(std::string_view name, CollectiveKind op, std::size_t bytes) {
  std::size_t algorithm = 0;
  CommunicatorState& c = find(name, op, bytes, takes_algorithm(op) ? &algorithm : nullptr);
  return algorithm == 0 ? c.backend->name() : c.backend->name() + ":" + c.algorithms_of(op)[algorithm - 1];
}

std::vector<std::string> Runtime::algorithm_names(std::string_view name, CollectiveKind op) {
  if (!takes_algorithm(op)) return {};
  return find(name, op, 0).algorithms_of(op);
}

bool Runtime::is_native(std::string_view name, CollectiveKind op) { return find(name, op, 0).backend->native(op); }

std::vector<int> Runtime::group_ranks(std::string_view name) {
  auto it = members_.find(name);
  if (it != members_.end()) return it->second;
  CommunicatorState& c = find(name, CollectiveKind::kBarrier, 0);  // a backend: the whole world (or an error)
  std::vector<int> all(static_cast<std::size_t>(c.world_size));
  for (int i = 0; i < c.world_size; ++i) all[static_cast<std::size_t>(i)] = i;
  return all;
}

}  // namespace chorus::rt
