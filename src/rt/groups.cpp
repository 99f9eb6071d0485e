// Groups (sub-communicators): split (MPI_Comm_split), new_group (torch.distributed's, every
// rank calls) and member_group (called by its members alone). Each group is its own instance of
// a backend over its members, used like a backend under its name.
#include <algorithm>
#include <cstdio>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "rt/errors.h"
#include "rt/rendezvous/mpi_env.h"
#include "rt/runtime_config.h"
#include "rt/runtime_instance.h"

namespace chorus::rt {

void Runtime::check_group_name(const std::string& name, const std::string& where) const {
  const auto& known = known_backends();
  if (name.empty() || name == "auto" || name == "all" || std::find(known.begin(), known.end(), name) != known.end())
    throw InputError(where, fmt::format("'{}' cannot name a group (backend names, auto and all are taken)", name));
  if (communicators_.count(name) != 0 || std::find(not_member_.begin(), not_member_.end(), name) != not_member_.end())
    throw InputError(where, fmt::format("a group or backend named '{}' exists already", name));
}

std::string Runtime::group_key_base(const char* kind, const std::string& name) const {
  return fmt::format("{}/{}/{}/{}", world_.run_id, generation_, kind, name);
}

void Runtime::split(const std::string& name, std::string_view backend, int color, int key) {
  const std::string where = fmt::format("split '{}' on rank {}", name, world_.rank);
  check_group_name(name, where);
  if (color < -1) throw InputError(where, fmt::format("color {} must be >= 0, or -1 to join no group", color));
  std::string kind(backend);
  if (kind == "auto") kind = order_.front();
  const auto& known = known_backends();
  if (std::find(known.begin(), known.end(), kind) == known.end())
    throw InputError(where, fmt::format("unknown backend '{}' (available: {}, auto)", kind, fmt::join(known, ", ")));
  if (kind == "mpi" && !mpi_is_initialized())
    throw InputError(where, "backend 'mpi' needs ranks started by mpirun (mpirun -n N prog)");
  // Every rank publishes (color, key, backend); every rank reads all of them, so all agree on
  // the members of every group and on the backend.
  const auto timeout = std::chrono::milliseconds(timeout_ms_);
  const std::string base = group_key_base("group", name);
  world_.store->set_string(fmt::format("{}/rank/{}", base, world_.rank), fmt::format("{} {} {}", color, key, kind));
  std::vector<std::pair<int, int>> mine;  // (key, world rank) of my color
  for (int j = 0; j < world_.size; ++j) {
    const std::string v = world_.store->get_string(fmt::format("{}/rank/{}", base, j), timeout);
    int c = 0, k = 0;
    char b[16] = {};
    if (std::sscanf(v.c_str(), "%d %d %15s", &c, &k, b) != 3)
      throw CommError(fmt::format("{}: malformed entry of rank {}: '{}'", where, j, v));
    if (kind != b)
      throw InputError(where, fmt::format("rank {} asked for backend '{}', this rank for '{}': every rank must "
                                          "give the same backend",
                                          j, b, kind));
    if (color >= 0 && c == color) mine.emplace_back(k, j);
  }
  if (color < 0) {
    if (kind == "mpi") mpi_split_world_as_non_member();
    not_member_.push_back(name);
    return;
  }
  std::sort(mine.begin(), mine.end());
  std::vector<int> world_ranks;
  for (const auto& m : mine) world_ranks.push_back(m.second);
  add_group(name, kind, std::move(world_ranks), fmt::format("{}/c{}", base, color), color, key);
}

void Runtime::new_group(const std::string& name, const std::vector<int>& ranks, std::string_view backend) {
  const std::string where = fmt::format("new_group '{}' on rank {}", name, world_.rank);
  if (ranks.empty()) throw InputError(where, "no ranks: a group needs at least one member");
  int key = -1;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] < 0 || ranks[i] >= world_.size)
      throw InputError(where,
                       fmt::format("ranks[{}] = {} is not a rank of the world (size {})", i, ranks[i], world_.size));
    if (std::count(ranks.begin(), ranks.end(), ranks[i]) > 1)
      throw InputError(where, fmt::format("rank {} is listed twice", ranks[i]));
    if (ranks[i] == world_.rank) key = static_cast<int>(i);
  }
  split(name, backend, key >= 0 ? 0 : -1, key);
}

void Runtime::member_group(const std::string& name, const std::vector<int>& world_ranks, std::string_view backend) {
  const std::string where = fmt::format("member_group '{}' on rank {}", name, world_.rank);
  check_group_name(name, where);
  std::string kind(backend);
  if (kind == "auto") kind = world_.single_host ? "shm" : "gloo";
  if (kind != "shm" && kind != "gloo")
    throw InputError(where, fmt::format("backend '{}': a group made by its members alone runs on shm or gloo (mpi "
                                        "needs every world rank in the call: use new_group)",
                                        kind));
  if (kind == "shm" && !world_.single_host) throw InputError(where, "backend 'shm' needs every rank on one host");
  int me = -1;
  for (std::size_t i = 0; i < world_ranks.size(); ++i) {
    if (world_ranks[i] < 0 || world_ranks[i] >= world_.size)
      throw InputError(
          where, fmt::format("ranks[{}] = {} is not a rank of the world (size {})", i, world_ranks[i], world_.size));
    if (std::count(world_ranks.begin(), world_ranks.end(), world_ranks[i]) > 1)
      throw InputError(where, fmt::format("rank {} is listed twice", world_ranks[i]));
    if (world_ranks[i] == world_.rank) me = static_cast<int>(i);
  }
  if (me < 0) throw InputError(where, "this rank is not in the list: only the members call member_group");
  add_group(name, kind, world_ranks, group_key_base("member_group", name), 0, me);
}

void Runtime::add_group(const std::string& name, const std::string& kind, std::vector<int> world_ranks,
                        const std::string& key_prefix, int color, int key) {
  BackendContext ctx = world_context(key_prefix, world_ranks);
  ctx.rank = static_cast<int>(std::find(world_ranks.begin(), world_ranks.end(), world_.rank) - world_ranks.begin());
  ctx.size = static_cast<int>(world_ranks.size());
  ctx.mpi_color = color;
  ctx.mpi_key = key;
  auto c = make_communicator(kind, name, ctx);
  std::string map;
  for (std::size_t i = 0; i < world_ranks.size() && i < 16; ++i)
    map += fmt::format("{}group rank {} = world rank {}", i == 0 ? "" : ", ", i, world_ranks[i]);
  if (world_ranks.size() > 16) map += ", ...";
  c->group_note = fmt::format("[in group '{}' on {}: {}]", name, kind, map);
  std::lock_guard lock(mutex_);
  CommunicatorState* added = c.get();
  communicators_[name] = std::move(c);
  groups_.push_back(name);
  members_[name] = std::move(world_ranks);
  fast_.add(name, added);
}

int Runtime::next_instance(std::string_view layer) {
  std::lock_guard lock(mutex_);
  auto it = instances_.find(layer);
  if (it == instances_.end()) it = instances_.emplace(std::string(layer), 0).first;
  return it->second++;
}

}  // namespace chorus::rt
