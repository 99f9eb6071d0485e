// The mpi backend's collectives: the blocking MPI functions (Open MPI's nonblocking ones
// measured slower here), each marked for the watchdog by a Guard while it runs.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "rt/backends/mpi/mpi_backend.h"

namespace chorus::rt::mpi_backend {

// Marks an operation as running for the watchdog: an odd counter while one runs. (No clock
// read here: the watchdog times how long the counter stays at the same odd value.)
struct MpiBackend::Guard {
  // Counts started and finished operations. Several threads may run operations at once (the
  // collective, send and receive threads, and callers running operations inline); each
  // thread counts in its own cache line with plain stores, which keeps locked instructions
  // off this path. The watchdog sums them.
  Guard(MpiBackend& b, const char* what) : backend(b), counter(b.my_counter()) {
    backend.current_op_.store(what, std::memory_order_relaxed);
    bump(counter.started);
  }
  ~Guard() { bump(counter.finished); }
  void bump(std::atomic<std::uint64_t>& c) {
    if (&counter == &backend.counters_.back())  // shared by the threads beyond the first 63
      c.fetch_add(1, std::memory_order_relaxed);
    else
      c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  MpiBackend& backend;
  struct OpCounter& counter;
};

OpCounter& MpiBackend::my_counter() {
  thread_local std::uint64_t owner = 0;
  thread_local OpCounter* mine = nullptr;
  if (owner != id_) {
    const int i = std::min(next_counter_.fetch_add(1, std::memory_order_relaxed), kCounters - 1);
    mine = &counters_[static_cast<std::size_t>(i)];
    owner = id_;
  }
  return *mine;
}

int MpiBackend::wait_all_guarded(MPI_Request* reqs, int n, MPI_Status* statuses, const char* what) {
  Guard g(*this, what);
  return MPI_Waitall(n, reqs, statuses);
}

void MpiBackend::barrier() {
  Guard g(*this, "barrier");
  check(MPI_Barrier(comm_), "barrier");
}

void MpiBackend::broadcast(void* buf, std::size_t count, DType d, int root) {
  broadcast_on(comm_, buf, count, d, root);
}

void MpiBackend::reduce(const void* in, void* out, std::size_t count, DType d, ReduceOp op, int root) {
  Guard g(*this, "reduce");
  const void* send = rank_ == root ? in_or_inplace(in, out) : in;
  check(MPI_Reduce(send, out, to_int(count, "reduce"), mpi_type(d), mpi_op(d, op), root, comm_), "reduce");
}

void MpiBackend::all_reduce(const void* in, void* out, std::size_t count, DType d, ReduceOp op) {
  all_reduce_on(comm_, in, out, count, d, op);
}

void MpiBackend::reduce_scatter(const void* in, void* out, std::size_t count, DType d, ReduceOp op) {
  reduce_scatter_on(comm_, in, out, count, d, op);
}

void MpiBackend::all_gather(const void* in, void* out, std::size_t count, DType d) {
  all_gather_on(comm_, in, out, count, d);
}

void MpiBackend::gather(const void* in, void* out, std::size_t count, DType d, int root) {
  Guard g(*this, "gather");
  const int n = to_int(count, "gather");
  check(MPI_Gather(in, n, mpi_type(d), out, n, mpi_type(d), root, comm_), "gather");
}

void MpiBackend::scatter(const void* in, void* out, std::size_t count, DType d, int root) {
  Guard g(*this, "scatter");
  const int n = to_int(count, "scatter");
  check(MPI_Scatter(in, n, mpi_type(d), out, n, mpi_type(d), root, comm_), "scatter");
}

void MpiBackend::all_to_all_single(const void* in, void* out, std::size_t count, DType d) {
  all_to_all_single_on(comm_, in, out, count, d);
}

void MpiBackend::all_gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                             DType d) {
  Guard g(*this, "all_gatherv");
  const auto c = to_ints(counts, "all_gatherv"), o = to_ints(displs, "all_gatherv");
  const bool in_place = in == static_cast<const char*>(out) + displs[rank_] * dtype_bytes(d);
  check(MPI_Allgatherv(in_place ? MPI_IN_PLACE : in, to_int(count, "all_gatherv"), mpi_type(d), out, c.data(), o.data(),
                       mpi_type(d), comm_),
        "all_gatherv");
}

void MpiBackend::gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                         DType d, int root) {
  Guard g(*this, "gatherv");
  std::vector<int> c, o;
  if (rank_ == root) c = to_ints(counts, "gatherv"), o = to_ints(displs, "gatherv");
  check(MPI_Gatherv(in, to_int(count, "gatherv"), mpi_type(d), out, c.data(), o.data(), mpi_type(d), root, comm_),
        "gatherv");
}

void MpiBackend::scatterv(const void* in, const Counts& counts, const Counts& displs, void* out, std::size_t count,
                          DType d, int root) {
  Guard g(*this, "scatterv");
  std::vector<int> c, o;
  if (rank_ == root) c = to_ints(counts, "scatterv"), o = to_ints(displs, "scatterv");
  check(MPI_Scatterv(in, c.data(), o.data(), mpi_type(d), out, to_int(count, "scatterv"), mpi_type(d), root, comm_),
        "scatterv");
}

void MpiBackend::all_to_all(const std::vector<const void*>& ins, const Counts& in_counts,
                            const std::vector<void*>& outs, const Counts& out_counts, DType d) {
  Guard g(*this, "all_to_all");
  const std::size_t eb = dtype_bytes(d);
  std::vector<int> scounts(size_), rcounts(size_), zeros(size_, 0);
  std::vector<MPI_Datatype> stypes(size_, MPI_BYTE), rtypes(size_, MPI_BYTE);
  auto absolute = [&](const void* p, std::size_t bytes, MPI_Datatype& type, int& count) {
    if (bytes == 0) return;
    MPI_Aint address = 0;
    MPI_Get_address(p, &address);
    const int length = to_int(bytes, "all_to_all");
    MPI_Type_create_hindexed(1, &length, &address, MPI_BYTE, &type);
    MPI_Type_commit(&type);
    count = 1;
  };
  for (int j = 0; j < size_; ++j) {
    absolute(ins[j], in_counts[j] * eb, stypes[j], scounts[j]);
    absolute(outs[j], out_counts[j] * eb, rtypes[j], rcounts[j]);
  }
  const int rc = MPI_Alltoallw(MPI_BOTTOM, scounts.data(), zeros.data(), stypes.data(), MPI_BOTTOM, rcounts.data(),
                               zeros.data(), rtypes.data(), comm_);
  for (auto* types : {&stypes, &rtypes})
    for (auto& t : *types)
      if (t != MPI_BYTE) MPI_Type_free(&t);
  check(rc, "all_to_all");
}

void MpiBackend::all_to_allv(const void* in, const Counts& sc, const Counts& sd, void* out, const Counts& rc,
                             const Counts& rd, DType d) {
  Guard g(*this, "all_to_allv");
  const auto a = to_ints(sc, "all_to_allv"), b = to_ints(sd, "all_to_allv"), c = to_ints(rc, "all_to_allv"),
             e = to_ints(rd, "all_to_allv");
  check(MPI_Alltoallv(in, a.data(), b.data(), mpi_type(d), out, c.data(), e.data(), mpi_type(d), comm_), "all_to_allv");
}

void MpiBackend::broadcast_on(MPI_Comm comm, void* buf, std::size_t count, DType d, int root) {
  Guard g(*this, "broadcast");
  check(MPI_Bcast(buf, to_int(count, "broadcast"), mpi_type(d), root, comm), "broadcast");
}

void MpiBackend::all_reduce_on(MPI_Comm comm, const void* in, void* out, std::size_t count, DType d, ReduceOp op) {
  Guard g(*this, "all_reduce");
  check(MPI_Allreduce(in_or_inplace(in, out), out, to_int(count, "all_reduce"), mpi_type(d), mpi_op(d, op), comm),
        "all_reduce");
}

void MpiBackend::reduce_scatter_on(MPI_Comm comm, const void* in, void* out, std::size_t count, DType d, ReduceOp op) {
  Guard g(*this, "reduce_scatter");
  check(MPI_Reduce_scatter_block(in, out, to_int(count, "reduce_scatter"), mpi_type(d), mpi_op(d, op), comm),
        "reduce_scatter");
}

void MpiBackend::all_gather_on(MPI_Comm comm, const void* in, void* out, std::size_t count, DType d) {
  Guard g(*this, "all_gather");
  const int n = to_int(count, "all_gather");
  const bool in_place = in == static_cast<const char*>(out) + count * dtype_bytes(d) * static_cast<std::size_t>(rank_);
  check(MPI_Allgather(in_place ? MPI_IN_PLACE : in, n, mpi_type(d), out, n, mpi_type(d), comm), "all_gather");
}

void MpiBackend::all_to_all_single_on(MPI_Comm comm, const void* in, void* out, std::size_t count, DType d) {
  Guard g(*this, "all_to_all_single");
  const int n = to_int(count, "all_to_all_single");
  check(MPI_Alltoall(in, n, mpi_type(d), out, n, mpi_type(d), comm), "all_to_all_single");
}

}  // namespace chorus::rt::mpi_backend
