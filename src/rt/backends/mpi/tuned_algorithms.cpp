// Open MPI's coll/tuned algorithms as the mpi backend's named algorithms: each one fixed, through
// MPI_T, on a duplicate of the backend's communicator made at construction; run_algorithm makes
// the same MPI call on that duplicate.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "rt/backends/mpi/mpi_backend.h"

namespace chorus::rt::mpi_backend {

std::vector<std::string> MpiBackend::algorithms(CollectiveKind op) const {
  std::vector<std::string> names;
  if (const auto it = algorithm_comms_.find(op); it != algorithm_comms_.end())
    for (const auto& [name, c] : it->second) names.push_back(name);
  for (auto& n : Backend::algorithms(op)) names.push_back(n);
  return names;
}

void MpiBackend::run_algorithm(std::size_t index, const Call& c) {
  const auto it = algorithm_comms_.find(c.op);
  const std::size_t own = it == algorithm_comms_.end() ? 0 : it->second.size();
  if (index >= own) return Backend::run_algorithm(index - own, c);
  const MPI_Comm comm = it->second[index].second;
  switch (c.op) {
    case CollectiveKind::kAllReduce:
      return all_reduce_on(comm, c.in, c.out, c.count, c.dtype, c.reduce_op);
    case CollectiveKind::kBroadcast:
      return broadcast_on(comm, c.out, c.count, c.dtype, c.root);
    case CollectiveKind::kAllGather:
      return all_gather_on(comm, c.in, c.out, c.count, c.dtype);
    case CollectiveKind::kReduceScatter:
      return reduce_scatter_on(comm, c.in, c.out, c.count, c.dtype, c.reduce_op);
    case CollectiveKind::kAllToAllSingle:
      return all_to_all_single_on(comm, c.in, c.out, c.count, c.dtype);
    default:
      throw std::logic_error("run_algorithm: " + std::string(to_string(c.op)) + " takes no algorithm");
  }
}

template <typename Fn>
bool MpiBackend::with_cvar(int index, int value, Fn&& fn) {
  MPI_T_cvar_handle handle;
  int n = 0, before = 0;
  if (MPI_T_cvar_handle_alloc(index, nullptr, &handle, &n) != MPI_SUCCESS) return false;
  MPI_T_cvar_read(handle, &before);
  const bool ok = MPI_T_cvar_write(handle, &value) == MPI_SUCCESS;
  if (ok) fn();
  MPI_T_cvar_write(handle, &before);
  MPI_T_cvar_handle_free(&handle);
  return ok;
}

void MpiBackend::create_algorithm_comms() {
  static constexpr std::pair<CollectiveKind, const char*> kVariables[] = {
      {CollectiveKind::kAllReduce, "coll_tuned_allreduce_algorithm"},
      {CollectiveKind::kBroadcast, "coll_tuned_bcast_algorithm"},
      {CollectiveKind::kAllGather, "coll_tuned_allgather_algorithm"},
      {CollectiveKind::kReduceScatter, "coll_tuned_reduce_scatter_block_algorithm"},
      {CollectiveKind::kAllToAllSingle, "coll_tuned_alltoall_algorithm"}};
  int provided = 0;
  if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) return;
  mpi_t_ = true;
  int dynamic_index = -1, n = 0;
  if (MPI_T_cvar_get_index("coll_tuned_use_dynamic_rules", &dynamic_index) != MPI_SUCCESS) return;
  MPI_T_cvar_handle handle;
  int dynamic = 0;
  if (MPI_T_cvar_handle_alloc(dynamic_index, nullptr, &handle, &n) != MPI_SUCCESS) return;
  MPI_T_cvar_read(handle, &dynamic);
  MPI_T_cvar_handle_free(&handle);
  if (dynamic == 0) return;
  for (const auto& entry : kVariables) {  // (not structured bindings: clang 14 cannot capture them)
    const CollectiveKind op = entry.first;
    int index = -1;
    if (MPI_T_cvar_get_index(entry.second, &index) != MPI_SUCCESS) continue;
    for (const auto& item : enumeration(index)) {
      const int value = item.first;
      const std::string& name = item.second;
      if (value == 0 || (name.find("two_proc") != std::string::npos && size_ != 2)) continue;
      if (!with_cvar(index, value, [&] {
            MPI_Comm c = MPI_COMM_NULL;
            MPI_Comm_dup(comm_, &c);
            MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
            algorithm_comms_[op].emplace_back(name, c);
          }))
        break;
    }
  }
}

std::vector<std::pair<int, std::string>> MpiBackend::enumeration(int index) {
  char name[256], desc[1024];
  int name_len = sizeof name, desc_len = sizeof desc, verbosity = 0, bind = 0, scope = 0;
  MPI_Datatype type;
  MPI_T_enum enumtype = MPI_T_ENUM_NULL;
  std::vector<std::pair<int, std::string>> items;
  if (MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &type, &enumtype, desc, &desc_len, &bind, &scope) !=
          MPI_SUCCESS ||
      enumtype == MPI_T_ENUM_NULL)
    return items;
  int count = 0;
  char enum_name[256];
  int enum_name_len = sizeof enum_name;
  if (MPI_T_enum_get_info(enumtype, &count, enum_name, &enum_name_len) != MPI_SUCCESS) return items;
  for (int i = 0; i < count; ++i) {
    int value = 0;
    char item[256];
    int item_len = sizeof item;
    if (MPI_T_enum_get_item(enumtype, i, &value, item, &item_len) == MPI_SUCCESS) items.emplace_back(value, item);
  }
  return items;
}

}  // namespace chorus::rt::mpi_backend
