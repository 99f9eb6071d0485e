// Names to communicators: the backends and groups of a runtime, "auto" (the tuning table, else
// the first backend) and "backend:algorithm".
#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "rt/runtime_instance.h"

namespace chorus::rt {

namespace {

constexpr std::size_t kNoSuchAlgorithm = ~std::size_t{0};

// A name with an algorithm: the exact name first (group names may hold ':'), else the part
// before the last ':' names the backend or group, the rest the algorithm. `base` becomes the
// backend or group; returns the algorithm ("" for none).
template <typename Map>
std::string split_algorithm(std::string& base, const Map& communicators) {
  const auto colon = base.rfind(':');
  if (colon == std::string::npos || communicators.count(base) != 0) return {};
  std::string named = base.substr(colon + 1);
  base.resize(colon);
  return named;
}

// 0 for "default", else 1 + the index of `named` among `names`, or kNoSuchAlgorithm.
std::size_t algorithm_index(const std::vector<std::string>& names, const std::string& named) {
  if (named == "default") return 0;
  const auto a = std::find(names.begin(), names.end(), named);
  return a == names.end() ? kNoSuchAlgorithm : static_cast<std::size_t>(a - names.begin()) + 1;
}

// "gloo has no broadcast algorithm 'ring' (it has: default, linear_p2p)".
std::string no_such_algorithm(std::string_view owner, CollectiveKind op, const std::string& named,
                              const std::vector<std::string>& names) {
  return fmt::format("{} has no {} algorithm '{}' (it has: default{}{})", owner, to_string(op), named,
                     names.empty() ? "" : ", ", fmt::join(names, ", "));
}

}  // namespace

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
  std::string base = name == "auto" ? pick_backend(op, bytes) : std::string(name);
  const std::string named = split_algorithm(base, communicators_);
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
    const std::size_t a = algorithm_index(names, named);
    if (a == kNoSuchAlgorithm)
      throw InputError(where, fmt::format("'{}': {}", name, no_such_algorithm(base, op, named, names)));
    *algorithm = op == CollectiveKind::kBarrier ? 0 : a;
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
    std::string base = h.name_;
    h.algorithm_ = split_algorithm(base, communicators_);
  }
  if (h.algorithm_.empty()) return h;
  static_assert(Communicator::kMissing == kNoSuchAlgorithm);
  for (CollectiveKind op : kAllCollectiveKinds)
    if (takes_algorithm(op))
      h.algorithms_[static_cast<std::size_t>(op)] = algorithm_index(c.algorithms_of(op), h.algorithm_);
  return h;
}

void Communicator::throw_missing_algorithm(CollectiveKind op) const {
  const CommunicatorState& c = *state_;
  throw InputError(fmt::format("{} on rank {}", to_string(op), c.rank),
                   fmt::format("communicator '{}': {}", name_,
                               no_such_algorithm(c.backend->name(), op, algorithm_, c.algorithms_of(op))));
}

const CommunicatorState& Communicator::state(std::string_view what) const {
  if (state_ == nullptr) throw InputError(std::string(what), "no communicator (made by rt::communicator(name))");
  if (alive_.expired())
    throw InputError(std::string(what),
                     fmt::format("communicator '{}' is used after its runtime ended (finalize())", name_));
  return *state_;
}

int Communicator::rank() const { return state("rank").rank; }
int Communicator::size() const { return state("size").world_size; }

std::string Communicator::resolve(CollectiveKind op) const {
  const CommunicatorState& c = state(to_string(op));
  if (auto_) return "auto";
  const std::size_t a = takes_algorithm(op) ? algorithms_[static_cast<std::size_t>(op)] : 0;
  if (a == kMissing) throw_missing_algorithm(op);
  const Backend& b = *c.backend;
  return a == 0 ? b.name() : b.name() + ":" + c.algorithms_of(op)[a - 1];
}

Work Communicator::issue(Call call, bool async_op) const {
  state(to_string(call.op));
  if (layered_) return issue_layered(std::move(call), async_op);
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
