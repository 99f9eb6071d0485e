#pragma once
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
// request); see docs/failures.md.
//
// Collectives call the blocking MPI functions: Open MPI's nonblocking ones (libnbc) measured
// 2x slower at 8 B and 1.45x at 1 MiB here (MPI_Iallreduce + MPI_Test against MPI_Allreduce,
// 2 ranks), and the API must add no cost over a direct call. A blocked MPI collective cannot
// be abandoned safely, so a watchdog bounds them: one still running after the operation
// timeout aborts the job with a clear message (the process ends; nothing is left to write
// into a freed buffer).
//
// The backend's ideas, one file each:
//   mpi_backend.cpp       the communicator (a duplicate or split of MPI_COMM_WORLD), the datatype
//                         and operator tables (f16 / bf16 as user-defined operators)
//   point_to_point.cpp    nonblocking send / recv polled against the deadline, and the time-out
//   collectives.cpp       the blocking collectives, each marked for the watchdog (Guard)
//   agreement_exchange.cpp  the runtime's agreement exchange: rows sent straight to each peer
//   tuned_algorithms.cpp  Open MPI's coll/tuned algorithms as named algorithms (MPI_T)
//   watchdog.cpp          the thread that aborts the job when a collective outlives the timeout
#include <mpi.h>

#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "rt/backends/backends.h"
#include "rt/dtype.h"

namespace chorus::rt::mpi_backend {

[[noreturn, gnu::cold, gnu::noinline]] void throw_too_large(std::size_t n, const char* what);

inline int to_int(std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(INT_MAX)) [[unlikely]]
    throw_too_large(n, what);
  return static_cast<int>(n);
}

std::vector<int> to_ints(const Counts& v, const char* what);

[[noreturn, gnu::cold, gnu::noinline]] void throw_mpi_error(int rc, const char* what);

inline void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) [[unlikely]]
    throw_mpi_error(rc, what);
}

// Keeps `inplace` semantics of the API: MPI wants MPI_IN_PLACE when in == out.
inline const void* in_or_inplace(const void* in, const void* out) { return in == out ? MPI_IN_PLACE : in; }

// The agreement exchange sends each row as messages of at most this many bytes: one message of
// Open MPI's shared-memory transport (vader) goes eagerly up to 4040 bytes with its 4 KiB eager
// limit (an exchange of 4040 bytes took 0.45 us here, one of 4044 went by rendezvous and took
// 2-8 us), so a row of several parts, all sent at once, never waits for a rendezvous round trip.
// The first part opens with the row's length on the wire (kPartHeader bytes): a receiver learns
// from it how many parts follow (agreement_exchange.cpp).
constexpr std::size_t kPartBytes = 4032;
constexpr std::size_t kPartHeader = 8;
// Calls of up to this many bytes per rank ride inside the agreement exchange
// (agreement_inline_bytes): up to kBigRideRanks ranks 16 KiB, a row of 5 parts (an exchange of
// 16 KiB in eager parts took 1.4 us against 7-9 us as one message, 2 ranks), which makes a call
// that rides faster than MPI_Allreduce, whose own messages past the eager limit go by
// rendezvous (2 ranks: 4 KiB 0.88 us against 0.99, 16 KiB 2.7 us against 5.9;
// BENCHMARKS-history.md, "mpi: the agreement's rows in eager parts"); up to kRowExchangeRanks
// ranks a row that fits one part (8 ranks would send 35 parts each way at 16 KiB, unmeasured on
// this machine's 2 cores). A row past the eager limit in one message went by rendezvous: a
// 4 KiB all-reduce that rode so took 3.1 us against MPI_Allreduce's 0.8.
constexpr std::size_t kRideBytes = 16384;
constexpr std::size_t kOnePartRideBytes = kPartBytes - kPartHeader - 32;  // 32: the digest
constexpr int kBigRideRanks = 4;
constexpr int kRowExchangeRanks = 8;  // beyond: the fixed-size all-gather of the rows (Backend's)

struct alignas(64) OpCounter {
  std::atomic<std::uint64_t> started{0}, finished{0};
};

class MpiBackend final : public Backend {
 public:
  explicit MpiBackend(const BackendContext& ctx);
  ~MpiBackend() override;

  std::string name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool native(CollectiveKind) const override { return true; }
  // An MPI operation cannot be abandoned: from now on, the watchdog ends the job (MPI_Abort)
  // as soon as one is in flight on this backend, naming `why` (watchdog.cpp).
  void interrupt(const std::string& why) override;

  bool concurrent_point_to_point() const override { return thread_multiple_; }
  // MPI_Iprobe runs Open MPI's progress engine (all its transports, every communicator) once.
  void progress() override;
  void user_send(const void* buf, std::size_t bytes, int dst);
  // The application's receive learns its message's size first (MPI_Improbe, polled against the
  // deadline) and refuses one of another size before receiving: a smaller buffer would end in
  // MPI_ERR_TRUNCATE after a partial write, a larger one would pass silently. A refused message
  // stays unreceived; the backend is broken after the error, and its sender's send completes
  // (sent eagerly) or times out naming this rank.
  void user_recv(void* buf, std::size_t bytes, int src);
  void send(const void* buf, std::size_t bytes, int dst) override;
  void recv(void* buf, std::size_t bytes, int src) override;
  // The runtime's agreement (rt/agreement.h) before every collective, up to kRowExchangeRanks
  // ranks (agreement_exchange.cpp): each rank's row goes to every peer as only the part in use
  // (the 32-byte digest alone when the call does not ride), in parts of at most kPartBytes, the
  // first of which says the row's length; each part lands in a receive with room for no more
  // than its share of a full row, so a peer that sends more cannot overrun it (MPI ends such a
  // receive with MPI_ERR_TRUNCATE having written no more than the buffer, and a length past a
  // full row is refused before any further receive is posted: both a CommError). The
  // fixed-size all-gather of full rows it replaces made every call pay for the largest one
  // that may ride, so the rows carried only 224 bytes and a 1 KiB all-reduce paid a second
  // round (+60 % over MPI_Allreduce, 2 ranks). Now a call that rides costs its parts each way,
  // less than MPI_Allreduce's own exchange costs at 4-16 KiB (whose messages past the eager
  // limit go by rendezvous), so the rows carry up to 16 KiB (kRideBytes); beyond 8 ranks,
  // n - 1 messages each way would cost more than the all-gather of the rows (Backend's default).
  std::size_t agreement_inline_bytes() const override {
    if (size_ <= kBigRideRanks) return kRideBytes;
    return size_ <= kRowExchangeRanks ? kOnePartRideBytes : Backend::agreement_inline_bytes();
  }
  char* agreement_row() override { return agreement_send_.empty() ? nullptr : agreement_send_.data() + kPartHeader; }
  const char* const* agreement_exchange(std::size_t used) override;
  void send_recv(const void* sbuf, std::size_t sbytes, int dst, void* rbuf, std::size_t rbytes, int src) override;
  void barrier();
  void broadcast(void* buf, std::size_t count, DType d, int root);
  void reduce(const void* in, void* out, std::size_t count, DType d, ReduceOp op, int root);
  void all_reduce(const void* in, void* out, std::size_t count, DType d, ReduceOp op);
  std::vector<std::string> algorithms(CollectiveKind op) const override;
  // Open MPI's algorithm `index`: the same MPI call on the duplicate that has it fixed.
  void run_algorithm(std::size_t index, const Call& c) override;
  void reduce_scatter(const void* in, void* out, std::size_t count, DType d, ReduceOp op);
  void all_gather(const void* in, void* out, std::size_t count, DType d);
  void gather(const void* in, void* out, std::size_t count, DType d, int root);
  void scatter(const void* in, void* out, std::size_t count, DType d, int root);
  void all_to_all_single(const void* in, void* out, std::size_t count, DType d);
  void all_gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs, DType d);
  void gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs, DType d,
               int root);
  void scatterv(const void* in, const Counts& counts, const Counts& displs, void* out, std::size_t count, DType d,
                int root);
  // The list form: MPI_Alltoallw over MPI_BOTTOM with one datatype per peer that addresses
  // that peer's buffer absolutely, so no packing is needed.
  void all_to_all(const std::vector<const void*>& ins, const Counts& in_counts, const std::vector<void*>& outs,
                  const Counts& out_counts, DType d);
  void all_to_allv(const void* in, const Counts& sc, const Counts& sd, void* out, const Counts& rc, const Counts& rd,
                   DType d);

 private:
  // The operations' table: each kind on this backend's method, or the generic algorithm.
  static const OperationTable& operations();

  static constexpr int kTag = 7301;           // messages of the fallback collectives
  static constexpr int kUserTag = 7302;       // the application's send / recv
  static constexpr int kAgreementTag = 7303;  // the agreement's rows (agreement_exchange.cpp)

  // The operations that take named algorithms, on communicator `comm` (comm_, or a duplicate
  // with one of Open MPI's algorithms fixed).
  void broadcast_on(MPI_Comm comm, void* buf, std::size_t count, DType d, int root);
  void all_reduce_on(MPI_Comm comm, const void* in, void* out, std::size_t count, DType d, ReduceOp op);
  void reduce_scatter_on(MPI_Comm comm, const void* in, void* out, std::size_t count, DType d, ReduceOp op);
  void all_gather_on(MPI_Comm comm, const void* in, void* out, std::size_t count, DType d);
  void all_to_all_single_on(MPI_Comm comm, const void* in, void* out, std::size_t count, DType d);

  void send_on(const void* buf, std::size_t bytes, int dst, int tag);
  void recv_on(void* buf, std::size_t bytes, int src, int tag);

  // Polls `n` requests until all completed or the operation deadline passed. The first test
  // usually completes small messages, so the clock is read only when it does not.
  void complete(MPI_Request* reqs, int n, const char* what, int peer);

  [[noreturn, gnu::cold, gnu::noinline]] void time_out(MPI_Request* reqs, int n, const char* what, int peer);

  // Waits for `n` requests as a blocking collective does, marked for the watchdog as `what`
  // (collectives.cpp, beside Guard); returns MPI_Waitall's code.
  int wait_all_guarded(MPI_Request* reqs, int n, MPI_Status* statuses, const char* what);
  // The agreement exchange's buffers, made at construction (agreement_exchange.cpp).
  void create_agreement_exchange();
  // The exchange's rows of several parts, once the first parts say how many: their further
  // receives, posted after the `posted` requests, and the wait for them and this rank's further
  // sends (agreement_exchange.cpp).
  void finish_parts(int posted, const char* what);
  // The exchange's requests `first`..`first + n` that ended in error (agreement_exchange.cpp).
  [[noreturn, gnu::cold, gnu::noinline]] void throw_exchange_error(int rc, int first, int n, const char* what);
  // Rank `peer`'s row of `length` bytes on the wire is more than a full row's room.
  [[noreturn, gnu::cold, gnu::noinline]] void throw_row_too_large(int peer, std::size_t length, const char* what);

  // Marks an operation as running for the watchdog: an odd counter while one runs. (No clock
  // read here: the watchdog times how long the counter stays at the same odd value.)
  // (collectives.cpp, with its only users.)
  struct Guard;

  static std::int64_t now_ns();

  // The watchdog thread's loop (watchdog.cpp).
  void watch();

  void create_half_ops();

  template <DType D, ReduceOp O>
  static MPI_Op make_op();

  // The per-call lookup: one load from a table filled at construction.
  MPI_Datatype mpi_type(DType d) const { return type_table_[static_cast<int>(d)]; }
  MPI_Op mpi_op(DType d, ReduceOp op) const { return op_table_[static_cast<int>(d)][static_cast<int>(op)]; }

  MPI_Op lookup_op(DType d, ReduceOp op) const;

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
  void create_algorithm_comms();
  // The (value, name) items of control variable `index`'s enumeration; empty if it has none.
  static std::vector<std::pair<int, std::string>> enumeration(int index);
  // Runs `fn` with control variable `index` set to `value`, then restores it; false if it
  // cannot be written.
  template <typename Fn>
  static bool with_cvar(int index, int value, Fn&& fn);
  int rank_ = 0;
  int size_ = 1;
  MPI_Op half_ops_[2][4] = {{MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL},
                            {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL}};
  MPI_Datatype type_table_[std::size(kAllDTypes)] = {};
  MPI_Op op_table_[std::size(kAllDTypes)][std::size(kAllReduceOps)] = {};
  std::chrono::milliseconds timeout_;
  std::atomic<const char*> current_op_{""};
  // Each thread's counter (collectives.cpp, inlined into Guard there).
  OpCounter& my_counter();

  static constexpr int kCounters = 64;
  static inline std::atomic<std::uint64_t> next_id_{1};
  const std::uint64_t id_ = next_id_.fetch_add(1);
  std::array<OpCounter, kCounters> counters_;
  std::atomic<int> next_counter_{0};
  bool thread_multiple_ = false;
  // The agreement exchange's buffers (up to kRowExchangeRanks ranks; else empty): this rank's
  // row after the part header, a full row's room after a part header per peer (peers in rank
  // order, without this rank), every rank's row in rank order, and the requests (the first
  // parts' receives, this rank's sends, the further receives) with their statuses and, for each
  // receive, its peer.
  std::vector<char> agreement_send_, agreement_received_;
  std::vector<const char*> agreement_rows_;
  std::vector<MPI_Request> agreement_requests_;
  std::vector<MPI_Status> agreement_statuses_;
  std::vector<int> agreement_peers_;
  std::mutex watch_mutex_;
  std::condition_variable watch_cv_;
  bool stop_ = false;
  std::string interrupted_;  // interrupt()'s reason (guarded by watch_mutex_)
  std::thread watchdog_;
  std::function<void(const std::string&)> before_abort_;  // BackendContext::before_abort
};

}  // namespace chorus::rt::mpi_backend
