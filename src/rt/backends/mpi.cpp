// Backend "mpi": Open MPI on a duplicate of MPI_COMM_WORLD.
//
// Point to point (the application's send / recv and the fallbacks' send / recv / send_recv)
// is nonblocking, polled against the operation deadline: on timeout the operation ends with a
// TimeoutError naming the peer, after cancelling its receive (an unmatched receive is removed
// from MPI's queues, so MPI can no longer write the buffer). A request that cannot be
// cancelled (a send, or a receive already matched) is abandoned: Open MPI 4.1 (built without
// asynchronous progress: `ompi_info` says "OMPI progress: no") moves data only inside MPI calls
// of this process (ob1 + vader/tcp: the receiver copies or pulls the data itself), and after a
// failure the runtime never calls MPI again in this process — the backend is broken, finalize()
// neither frees the communicator nor finalises MPI, and a new init() refuses mpi. The program
// must not make MPI calls of its own after such a failure (they would progress the abandoned
// request); see docs/runtime.md, "Failures".
//
// Collectives call the blocking MPI functions: Open MPI's nonblocking ones (libnbc) measured
// 2x slower at 8 B and 1.45x at 1 MiB here (MPI_Iallreduce + MPI_Test against MPI_Allreduce,
// 2 ranks), and the API must add no cost over a direct call. A blocked MPI collective cannot
// be abandoned safely, so a watchdog bounds them: one still running after the operation
// timeout aborts the job with a clear message (the process ends; nothing is left to write
// into a freed buffer).
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "rt/backends/agreement.h"
#include "rt/backends/backends.h"
#include "rt/dtype.h"
#include "rt/errors.h"
#include "rt/rendezvous/mpi_env.h"

namespace chorus::rt {

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

[[noreturn, gnu::cold, gnu::noinline]] void throw_too_large(std::size_t n, const char* what) {
  throw InputError(fmt::format("mpi {}", what), fmt::format("count {} exceeds MPI's int limit ({})", n, INT_MAX));
}

inline int to_int(std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(INT_MAX)) [[unlikely]]
    throw_too_large(n, what);
  return static_cast<int>(n);
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

inline void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) [[unlikely]]
    throw_mpi_error(rc, what);
}

// Keeps `inplace` semantics of the API: MPI wants MPI_IN_PLACE when in == out.
const void* in_or_inplace(const void* in, const void* out) { return in == out ? MPI_IN_PLACE : in; }

struct alignas(64) OpCounter {
  std::atomic<std::uint64_t> started{0}, finished{0};
};

class MpiBackend final : public Backend {
 public:
  explicit MpiBackend(const BackendContext& ctx) : timeout_(ctx.timeout) {
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
    watchdog_ = std::thread([this] { watch(); });
  }

  ~MpiBackend() override {
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

  std::string name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool native(CollectiveKind) const override { return true; }

  bool concurrent_point_to_point() const override { return thread_multiple_; }
  // MPI_Iprobe runs Open MPI's progress engine (all its transports, every communicator) once.
  void progress() override {
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, MPI_STATUS_IGNORE);
  }
  void user_send(const void* buf, std::size_t bytes, int dst) override { send_on(buf, bytes, dst, kUserTag); }
  // The application's receive learns its message's size first (MPI_Improbe, polled against the
  // deadline) and refuses one of another size before receiving: a smaller buffer would end in
  // MPI_ERR_TRUNCATE after a partial write, a larger one would pass silently. A refused message
  // stays unreceived; the backend is broken after the error, and its sender's send completes
  // (sent eagerly) or times out naming this rank.
  void user_recv(void* buf, std::size_t bytes, int src) override {
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    int found = 0;
    check(MPI_Improbe(src, kUserTag, comm_, &found, &message, &status), "recv");
    if (!found) {
      const auto deadline = std::chrono::steady_clock::now() + timeout_;
      for (unsigned i = 1; !found; ++i) {
        if (i >= 64) sched_yield();  // ranks may outnumber cores
        if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) [[unlikely]]
          time_out(nullptr, 0, "recv", src);
        check(MPI_Improbe(src, kUserTag, comm_, &found, &message, &status), "recv");
      }
    }
    int count = 0;
    check(MPI_Get_count(&status, MPI_BYTE, &count), "recv");
    if (static_cast<std::size_t>(count) != bytes) [[unlikely]]
      throw_receive_size_mismatch("mpi", "recv", rank_, src, bytes, static_cast<std::uint64_t>(count));
    MPI_Request req;
    check(MPI_Imrecv(buf, count, MPI_BYTE, &message, &req), "recv");
    complete(&req, 1, "recv", src);
  }
  void send(const void* buf, std::size_t bytes, int dst) override { send_on(buf, bytes, dst, kTag); }
  void recv(void* buf, std::size_t bytes, int src) override { recv_on(buf, bytes, src, kTag); }
  void send_recv(const void* sbuf, std::size_t sbytes, int dst, void* rbuf, std::size_t rbytes, int src) override {
    MPI_Request reqs[2];
    check(MPI_Irecv(rbuf, to_int(rbytes, "send_recv"), MPI_BYTE, src, kTag, comm_, &reqs[0]), "send_recv");
    check(MPI_Isend(sbuf, to_int(sbytes, "send_recv"), MPI_BYTE, dst, kTag, comm_, &reqs[1]), "send_recv");
    complete(reqs, 2, "send_recv", src);
  }
  void barrier() override {
    Guard g(*this, "barrier");
    check(MPI_Barrier(comm_), "barrier");
  }
  void broadcast(void* buf, std::size_t count, DType d, int root) override { broadcast_on(comm_, buf, count, d, root); }
  void reduce(const void* in, void* out, std::size_t count, DType d, ReduceOp op, int root) override {
    Guard g(*this, "reduce");
    const void* send = rank_ == root ? in_or_inplace(in, out) : in;
    check(MPI_Reduce(send, out, to_int(count, "reduce"), mpi_type(d), mpi_op(d, op), root, comm_), "reduce");
  }
  void all_reduce(const void* in, void* out, std::size_t count, DType d, ReduceOp op) override {
    all_reduce_on(comm_, in, out, count, d, op);
  }
  std::vector<std::string> algorithms(CollectiveKind op) const override {
    std::vector<std::string> names;
    if (const auto it = algorithm_comms_.find(op); it != algorithm_comms_.end())
      for (const auto& [name, c] : it->second) names.push_back(name);
    for (auto& n : Backend::algorithms(op)) names.push_back(n);
    return names;
  }
  // Open MPI's algorithm `index`: the same MPI call on the duplicate that has it fixed.
  void run_algorithm(std::size_t index, const Call& c) override {
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
  void reduce_scatter(const void* in, void* out, std::size_t count, DType d, ReduceOp op) override {
    reduce_scatter_on(comm_, in, out, count, d, op);
  }
  void all_gather(const void* in, void* out, std::size_t count, DType d) override {
    all_gather_on(comm_, in, out, count, d);
  }
  void gather(const void* in, void* out, std::size_t count, DType d, int root) override {
    Guard g(*this, "gather");
    const int n = to_int(count, "gather");
    check(MPI_Gather(in, n, mpi_type(d), out, n, mpi_type(d), root, comm_), "gather");
  }
  void scatter(const void* in, void* out, std::size_t count, DType d, int root) override {
    Guard g(*this, "scatter");
    const int n = to_int(count, "scatter");
    check(MPI_Scatter(in, n, mpi_type(d), out, n, mpi_type(d), root, comm_), "scatter");
  }
  void all_to_all_single(const void* in, void* out, std::size_t count, DType d) override {
    all_to_all_single_on(comm_, in, out, count, d);
  }
  void all_gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                   DType d) override {
    Guard g(*this, "all_gatherv");
    const auto c = to_ints(counts, "all_gatherv"), o = to_ints(displs, "all_gatherv");
    const bool in_place = in == static_cast<const char*>(out) + displs[rank_] * dtype_bytes(d);
    check(MPI_Allgatherv(in_place ? MPI_IN_PLACE : in, to_int(count, "all_gatherv"), mpi_type(d), out, c.data(),
                         o.data(), mpi_type(d), comm_),
          "all_gatherv");
  }
  void gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs, DType d,
               int root) override {
    Guard g(*this, "gatherv");
    std::vector<int> c, o;
    if (rank_ == root) c = to_ints(counts, "gatherv"), o = to_ints(displs, "gatherv");
    check(MPI_Gatherv(in, to_int(count, "gatherv"), mpi_type(d), out, c.data(), o.data(), mpi_type(d), root, comm_),
          "gatherv");
  }
  void scatterv(const void* in, const Counts& counts, const Counts& displs, void* out, std::size_t count, DType d,
                int root) override {
    Guard g(*this, "scatterv");
    std::vector<int> c, o;
    if (rank_ == root) c = to_ints(counts, "scatterv"), o = to_ints(displs, "scatterv");
    check(MPI_Scatterv(in, c.data(), o.data(), mpi_type(d), out, to_int(count, "scatterv"), mpi_type(d), root, comm_),
          "scatterv");
  }
  // The list form: MPI_Alltoallw over MPI_BOTTOM with one datatype per peer that addresses
  // that peer's buffer absolutely, so no packing is needed.
  void all_to_all(const std::vector<const void*>& ins, const Counts& in_counts, const std::vector<void*>& outs,
                  const Counts& out_counts, DType d) override {
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

  void all_to_allv(const void* in, const Counts& sc, const Counts& sd, void* out, const Counts& rc, const Counts& rd,
                   DType d) override {
    Guard g(*this, "all_to_allv");
    const auto a = to_ints(sc, "all_to_allv"), b = to_ints(sd, "all_to_allv"), c = to_ints(rc, "all_to_allv"),
               e = to_ints(rd, "all_to_allv");
    check(MPI_Alltoallv(in, a.data(), b.data(), mpi_type(d), out, c.data(), e.data(), mpi_type(d), comm_),
          "all_to_allv");
  }

 private:
  static constexpr int kTag = 7301;      // messages of the fallback collectives
  static constexpr int kUserTag = 7302;  // the application's send / recv

  // The operations that take named algorithms, on communicator `comm` (comm_, or a duplicate
  // with one of Open MPI's algorithms fixed).
  void broadcast_on(MPI_Comm comm, void* buf, std::size_t count, DType d, int root) {
    Guard g(*this, "broadcast");
    check(MPI_Bcast(buf, to_int(count, "broadcast"), mpi_type(d), root, comm), "broadcast");
  }
  void all_reduce_on(MPI_Comm comm, const void* in, void* out, std::size_t count, DType d, ReduceOp op) {
    Guard g(*this, "all_reduce");
    check(MPI_Allreduce(in_or_inplace(in, out), out, to_int(count, "all_reduce"), mpi_type(d), mpi_op(d, op), comm),
          "all_reduce");
  }
  void reduce_scatter_on(MPI_Comm comm, const void* in, void* out, std::size_t count, DType d, ReduceOp op) {
    Guard g(*this, "reduce_scatter");
    check(MPI_Reduce_scatter_block(in, out, to_int(count, "reduce_scatter"), mpi_type(d), mpi_op(d, op), comm),
          "reduce_scatter");
  }
  void all_gather_on(MPI_Comm comm, const void* in, void* out, std::size_t count, DType d) {
    Guard g(*this, "all_gather");
    const int n = to_int(count, "all_gather");
    const bool in_place =
        in == static_cast<const char*>(out) + count * dtype_bytes(d) * static_cast<std::size_t>(rank_);
    check(MPI_Allgather(in_place ? MPI_IN_PLACE : in, n, mpi_type(d), out, n, mpi_type(d), comm), "all_gather");
  }
  void all_to_all_single_on(MPI_Comm comm, const void* in, void* out, std::size_t count, DType d) {
    Guard g(*this, "all_to_all_single");
    const int n = to_int(count, "all_to_all_single");
    check(MPI_Alltoall(in, n, mpi_type(d), out, n, mpi_type(d), comm), "all_to_all_single");
  }

  void send_on(const void* buf, std::size_t bytes, int dst, int tag) {
    MPI_Request req;
    check(MPI_Isend(buf, to_int(bytes, "send"), MPI_BYTE, dst, tag, comm_, &req), "send");
    complete(&req, 1, "send", dst);
  }
  void recv_on(void* buf, std::size_t bytes, int src, int tag) {
    MPI_Request req;
    check(MPI_Irecv(buf, to_int(bytes, "recv"), MPI_BYTE, src, tag, comm_, &req), "recv");
    complete(&req, 1, "recv", src);
  }

  // Polls `n` requests until all completed or the operation deadline passed. The first test
  // usually completes small messages, so the clock is read only when it does not.
  void complete(MPI_Request* reqs, int n, const char* what, int peer) {
    int done = 0;
    check(MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE), what);
    if (done) return;
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (unsigned i = 1;; ++i) {
      check(MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE), what);
      if (done) return;
      if (i >= 64) sched_yield();  // ranks may outnumber cores
      if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) [[unlikely]]
        time_out(reqs, n, what, peer);
    }
  }

  [[noreturn, gnu::cold, gnu::noinline]] void time_out(MPI_Request* reqs, int n, const char* what, int peer) {
    // Cancel what can be cancelled (an unmatched receive); see the file comment for the rest.
    int abandoned = 0;
    for (int i = 0; i < n; ++i) {
      if (reqs[i] == MPI_REQUEST_NULL) continue;
      MPI_Cancel(&reqs[i]);
      int finished = 0;
      MPI_Test(&reqs[i], &finished, MPI_STATUS_IGNORE);
      if (!finished) ++abandoned;
    }
    throw TimeoutError(
        fmt::format("mpi {}: rank {} timed out waiting for rank {} after {} ms (the peer is stuck, died, or "
                    "the ranks disagree on the call){}",
                    what, rank_, peer, timeout_.count(),
                    abandoned > 0 ? fmt::format("; {} request(s) abandoned inside MPI: this process must make "
                                                "no further MPI calls",
                                                abandoned)
                                  : std::string()));
  }

  // Marks an operation as running for the watchdog: an odd counter while one runs. (No clock
  // read here: the watchdog times how long the counter stays at the same odd value.)
  struct Guard {
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

  static std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  void watch() {
    std::unique_lock lock(watch_mutex_);
    std::uint64_t seen_started = 0, seen_finished = 0;
    std::int64_t seen_since = now_ns();
    while (!stop_) {
      watch_cv_.wait_for(lock, std::chrono::milliseconds(100));
      std::uint64_t f = 0, s = 0;
      for (const auto& c : counters_) {
        f += c.finished.load(std::memory_order_relaxed);
        s += c.started.load(std::memory_order_relaxed);
      }
      // Stuck: something is in flight and nothing started or finished for the whole timeout.
      if (s == f || s != seen_started || f != seen_finished) {
        seen_started = s;
        seen_finished = f;
        seen_since = now_ns();
        continue;
      }
      if (now_ns() - seen_since > timeout_.count() * 1000000) {
        std::fprintf(stderr,
                     "chorus rt: rank %d: mpi %s did not complete within %lld ms (a peer died or "
                     "the ranks disagree on the call); aborting the job\n",
                     rank_, current_op_.load(), static_cast<long long>(timeout_.count()));
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
    }
  }

  void create_half_ops() {
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
  static MPI_Op make_op() {
    MPI_Op op = MPI_OP_NULL;
    MPI_Op_create(&half_op<D, O>, 1, &op);
    return op;
  }

  // The per-call lookup: one load from a table filled at construction.
  MPI_Datatype mpi_type(DType d) const { return type_table_[static_cast<int>(d)]; }
  MPI_Op mpi_op(DType d, ReduceOp op) const { return op_table_[static_cast<int>(d)][static_cast<int>(op)]; }

  MPI_Op lookup_op(DType d, ReduceOp op) const {
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

  MPI_Comm comm_ = MPI_COMM_NULL;
  // Open MPI's coll/tuned algorithms by operation and name, each fixed on a duplicate of comm_.
  std::map<CollectiveKind, std::vector<std::pair<std::string, MPI_Comm>>> algorithm_comms_;
  bool mpi_t_ = false;  // MPI_T_init_thread succeeded (finalised with the backend)

  // The tuned module reads its forced algorithm of an operation (a process-wide MCA variable
  // such as coll_tuned_bcast_algorithm, written here through MPI_T) when a communicator is
  // created, and only with coll_tuned_use_dynamic_rules on (mpi_ensure_initialized sets it
  // before MPI_Init unless the environment says otherwise). The algorithms and their names are
  // the variable's enumeration as Open MPI reports it (but "ignore"; the two-process ones only
  // on two ranks, where Open MPI runs them). Without MPI_T or dynamic rules, only "default" and
  // the runtime's algorithms are offered. Every rank reads the same environment, so every rank
  // makes the same duplicates (MPI_Comm_dup is collective).
  void create_algorithm_comms() {
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
  // The (value, name) items of control variable `index`'s enumeration; empty if it has none.
  static std::vector<std::pair<int, std::string>> enumeration(int index) {
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
  // Runs `fn` with control variable `index` set to `value`, then restores it; false if it
  // cannot be written.
  template <typename Fn>
  static bool with_cvar(int index, int value, Fn&& fn) {
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
  int rank_ = 0;
  int size_ = 1;
  MPI_Op half_ops_[2][4] = {{MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL},
                            {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL}};
  MPI_Datatype type_table_[std::size(kAllDTypes)] = {};
  MPI_Op op_table_[std::size(kAllDTypes)][std::size(kAllReduceOps)] = {};
  std::chrono::milliseconds timeout_;
  std::atomic<const char*> current_op_{""};
  OpCounter& my_counter() {
    thread_local std::uint64_t owner = 0;
    thread_local OpCounter* mine = nullptr;
    if (owner != id_) {
      const int i = std::min(next_counter_.fetch_add(1, std::memory_order_relaxed), kCounters - 1);
      mine = &counters_[static_cast<std::size_t>(i)];
      owner = id_;
    }
    return *mine;
  }

  static constexpr int kCounters = 64;
  static inline std::atomic<std::uint64_t> next_id_{1};
  const std::uint64_t id_ = next_id_.fetch_add(1);
  std::array<OpCounter, kCounters> counters_;
  std::atomic<int> next_counter_{0};
  bool thread_multiple_ = false;
  std::mutex watch_mutex_;
  std::condition_variable watch_cv_;
  bool stop_ = false;
  std::thread watchdog_;
};

}  // namespace

std::unique_ptr<Backend> make_mpi_backend(const BackendContext& ctx) { return std::make_unique<MpiBackend>(ctx); }

}  // namespace chorus::rt
