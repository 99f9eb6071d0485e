// The mpi backend's communicator: a duplicate of MPI_COMM_WORLD (or a split of it, for a group)
// returning errors instead of aborting, and the tables that map every dtype and reduce op to
// MPI's (f16 / bf16 reduced as numbers by operators of our own), filled once at construction.
#include "rt/backends/mpi/mpi_backend.h"

#include <climits>
#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/error.h"
#include "rt/backends/operation_table.h"
#include "rt/errors.h"
#include "rt/rendezvous/mpi_env.h"

namespace chorus::rt {

namespace mpi_backend {

namespace {

MPI_Datatype lookup_type(DType d) {
  switch (d) {
    case DType::f16:
    case DType::bf16:
      return MPI_UINT16_T;
    case DType::f32:
      return MPI_FLOAT;
    case DType::f64:
      return MPI_DOUBLE;
    case DType::i8:
      return MPI_INT8_T;
    case DType::u8:
      return MPI_UINT8_T;
    case DType::i32:
      return MPI_INT32_T;
    case DType::i64:
      return MPI_INT64_T;
  }
  return MPI_BYTE;
}

// User-defined MPI operators that reduce f16 / bf16 as numbers.
template <DType D, ReduceOp O>
void half_op(void* in, void* inout, int* len, MPI_Datatype*) {
  reduce_into(D, O, inout, in, inout, static_cast<std::size_t>(*len));
}

}  // namespace

[[noreturn, gnu::cold, gnu::noinline]] void throw_too_large(std::size_t n, const char* what) {
  throw InputError(fmt::format("mpi {}", what), fmt::format("count {} exceeds MPI's int limit ({})", n, INT_MAX));
}

std::vector<int> to_ints(const Counts& v, const char* what) {
  std::vector<int> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = to_int(v[i], what);
  return out;
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_mpi_error(int rc, const char* what) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw CommError(fmt::format("mpi {}: {}", what, std::string(msg, static_cast<std::size_t>(len))));
}

// Every kind on Open MPI's own functions.
const OperationTable& MpiBackend::operations() {
  using K = CollectiveKind;
  static const OperationTable table =
      own_operations<MpiBackend, K::kSend, K::kRecv, K::kBarrier, K::kBroadcast, K::kReduce, K::kAllReduce,
                     K::kReduceScatter, K::kAllGather, K::kGather, K::kScatter, K::kAllToAllSingle, K::kAllToAll,
                     K::kAllGatherv, K::kGatherv, K::kScatterv, K::kAllToAllv>();
  return table;
}

MpiBackend::MpiBackend(const BackendContext& ctx)
    : Backend(operations()), timeout_(ctx.timeout), before_abort_(ctx.before_abort) {
  mpi_ensure_initialized();
  if (ctx.mpi_color < 0)
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  else
    MPI_Comm_split(MPI_COMM_WORLD, ctx.mpi_color, ctx.mpi_key, &comm_);
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  int provided = 0;
  MPI_Query_thread(&provided);
  thread_multiple_ = provided == MPI_THREAD_MULTIPLE;
  create_half_ops();
  for (DType d : kAllDTypes) type_table_[static_cast<int>(d)] = lookup_type(d);
  for (DType d : kAllDTypes)
    for (ReduceOp o : kAllReduceOps) op_table_[static_cast<int>(d)][static_cast<int>(o)] = lookup_op(d, o);
  create_algorithm_comms();
  create_agreement_exchange();
  watchdog_ = std::thread([this] { watch(); });
}

MpiBackend::~MpiBackend() {
  {
    std::lock_guard lock(watch_mutex_);
    stop_ = true;
  }
  watch_cv_.notify_all();
  watchdog_.join();
  if (mpi_is_initialized()) {
    for (auto& row : half_ops_)
      for (auto& op : row)
        if (op != MPI_OP_NULL) MPI_Op_free(&op);
    for (auto& [op, comms] : algorithm_comms_)
      for (auto& [name, c] : comms) MPI_Comm_free(&c);
    MPI_Comm_free(&comm_);
    if (mpi_t_) MPI_T_finalize();
  }
}

void MpiBackend::create_half_ops() {
  half_ops_[0][0] = make_op<DType::f16, ReduceOp::sum>();
  half_ops_[0][1] = make_op<DType::f16, ReduceOp::prod>();
  half_ops_[0][2] = make_op<DType::f16, ReduceOp::min>();
  half_ops_[0][3] = make_op<DType::f16, ReduceOp::max>();
  half_ops_[1][0] = make_op<DType::bf16, ReduceOp::sum>();
  half_ops_[1][1] = make_op<DType::bf16, ReduceOp::prod>();
  half_ops_[1][2] = make_op<DType::bf16, ReduceOp::min>();
  half_ops_[1][3] = make_op<DType::bf16, ReduceOp::max>();
}

template <DType D, ReduceOp O>
MPI_Op MpiBackend::make_op() {
  MPI_Op op = MPI_OP_NULL;
  MPI_Op_create(&half_op<D, O>, 1, &op);
  return op;
}

MPI_Op MpiBackend::lookup_op(DType d, ReduceOp op) const {
  const int index = op == ReduceOp::prod ? 1 : op == ReduceOp::min ? 2 : op == ReduceOp::max ? 3 : 0;
  if (d == DType::f16) return half_ops_[0][index];
  if (d == DType::bf16) return half_ops_[1][index];
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg:
      return MPI_SUM;
    case ReduceOp::prod:
      return MPI_PROD;
    case ReduceOp::min:
      return MPI_MIN;
    case ReduceOp::max:
      return MPI_MAX;
  }
  return MPI_SUM;
}

}  // namespace mpi_backend

std::unique_ptr<Backend> make_mpi_backend(const BackendContext& ctx) {
  return std::make_unique<mpi_backend::MpiBackend>(ctx);
}

}  // namespace chorus::rt
