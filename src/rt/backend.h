#pragma once
// The backend interface. A backend is one communication library (mpi, gloo, shm) over one
// group of ranks. Every operation is blocking and is only ever run from that backend's
// progress thread (or inline while the queue is idle), one at a time, in the order the
// application issued the operations — so implementations need no locking of their own.
//
// An operation reaches a backend as the Call it was issued as: run(call, wire) looks the call's
// kind up in the backend's OperationTable, one entry per CollectiveKind, each reading the Call's
// fields it needs. A backend's table starts as generic_operations() — the generic algorithms of
// algorithms/ (backend.cpp), built on send_recv() — and replaces the entries its library
// implements; native() reports which is which. Counts are in elements of the call's dtype;
// buffers of different ranks hold the same dtype. ReduceOp::avg reaches only a backend whose
// takes_avg() is true, which reduces it as sum (reduce_into does); either way the runtime divides.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "rt/call.h"
#include "rt/types.h"

namespace chorus::rt {

class Backend;

// Counts and displacements of `count` elements from every one of `n` ranks, packed in rank
// order: a uniform form's call as its vector form.
struct UniformCounts {
  Counts counts, displs;
  UniformCounts(int n, std::size_t count)
      : counts(static_cast<std::size_t>(n), count), displs(static_cast<std::size_t>(n)) {
    for (std::size_t j = 0; j < displs.size(); ++j) displs[j] = count * j;
  }
};

// One operation of a backend: runs `c` on `b` (of the table's backend type) with the reduce op
// `wire`: c.reduce_op, or sum for avg where the backend does not take avg (dispatch.h).
using Operation = void (*)(Backend& b, const Call& c, ReduceOp wire);
// A backend's operations, indexed by CollectiveKind.
using OperationTable = std::array<Operation, std::size(kAllCollectiveKinds)>;
constexpr std::size_t index_of(CollectiveKind op) { return static_cast<std::size_t>(op); }
// The generic algorithms for every kind (backend.cpp): what a backend's table keeps for the
// operations its library lacks. The application's point-to-point messages (kSend, kRecv) are
// send() and recv() there.
const OperationTable& generic_operations();

class Backend {
 public:
  virtual ~Backend() = default;
  // Runs `c` with the reduce op `wire`. The application's calls arrive through dispatch.h, which
  // keeps a world of one, uniform calls of no data and avg's division away from backends.
  void run(const Call& c, ReduceOp wire) { (*operations_)[index_of(c.op)](*this, c, wire); }

  virtual std::string name() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // True if `op` runs on the library's own implementation, false if on a fallback.
  virtual bool native(CollectiveKind op) const = 0;

  // Point to point, matched in issue order per pair of ranks.
  virtual void send(const void* buf, std::size_t bytes, int dst) = 0;
  virtual void recv(void* buf, std::size_t bytes, int src) = 0;
  // Sends to dst and receives from src at the same time (never deadlocks on large messages).
  virtual void send_recv(const void* send_buf, std::size_t send_bytes, int dst, void* recv_buf, std::size_t recv_bytes,
                         int src) = 0;

  // The application's point-to-point messages (rt::send / rt::recv: the table's kSend and kRecv)
  // may travel on a channel of their own, apart from the messages of the generic collectives
  // above (gloo, mpi), because they run on their own progress threads (one for sends, one for
  // receives) when concurrent_point_to_point() is true — so an asynchronous send and receive
  // between two ranks never wait for each other, as with MPI_Isend / MPI_Irecv.
  virtual bool concurrent_point_to_point() const { return false; }

  // Moves what this rank still owes its peers without starting an operation: finalize() calls
  // it while it waits for them. A library that moves data only inside its own calls (Open MPI
  // without asynchronous progress) may still hold a control message of a finished operation
  // (ob1's FIN of a rendezvous, queued when no fragment was free) that a peer's operation
  // waits for; a rank that stops calling it then hangs that peer. Open MPI's own runtime
  // barriers progress MPI while they wait for the same reason. Never called concurrently
  // with an operation of this backend; the default does nothing.
  virtual void progress() {}

  // rt::abort (Runtime::abort): ends this backend's operations in flight, from another thread,
  // with a CommError naming `why`; the runtime has already refused every later call. gloo
  // signals the failure on every connection (the library's own way to end a wait); shm's waits
  // end by themselves (BackendContext::aborted); an MPI operation cannot be abandoned, so mpi's
  // watchdog ends the job instead when one is in flight (docs/failures.md). The default does
  // nothing.
  virtual void interrupt(const std::string& why) { static_cast<void>(why); }

  // Agreement without checking mode (agreement.h): whether the backend compares its ranks'
  // calls on its own data path (shm). If not, the runtime exchanges a digest of each
  // collective's call first (small calls ride inside it), with this all-gather of `bytes` from
  // every rank: 32 bytes of digest plus agreement_inline_bytes(), a size that depends only on
  // the world size, so that it cannot itself disagree; `mine` opens with the call's OpSignature
  // (backends/agreement.h), which a backend may use to name the call. The default is all_gather.
  // Whether reductions may arrive with ReduceOp::avg (reduced as sum): a backend that compares
  // its ranks' calls itself sees avg apart from sum. Otherwise the runtime passes sum.
  virtual bool takes_avg() const { return false; }
  virtual bool agrees_on_data_path() const { return false; }
  // Such a backend's uniform collective of no data (`call.count` 0, more than one rank): the call
  // moves nothing, but it still compares its signature with its peers', as the digest exchange
  // does on the other backends, so that a peer that calls it with data fails naming both calls
  // rather than waiting for the timeout. The default does nothing.
  virtual void agree_empty(const Call& call) { static_cast<void>(call); }
  // The bytes of a small call's data that may ride inside that exchange, per rank (the same on
  // every rank: a function of the world size). The default suits the fixed-size all-gather,
  // where every call pays for the whole row; a backend whose exchange sends only the part in
  // use (gloo, mpi: agreement_exchange below) carries more.
  virtual std::size_t agreement_inline_bytes() const { return size() <= 8 ? 224 : size() <= 32 ? 32 : 0; }
  virtual void agreement_all_gather(const void* mine, void* all, std::size_t bytes) {
    run(calls::all_gather(mine, all, bytes, DType::u8), ReduceOp::sum);
  }
  // Or the exchange on buffers of the backend's own, each rank sending only the part of its row
  // in use (gloo): agreement_row() is the row the runtime fills in place (32 + the inline bytes
  // long; nullptr, the default, means the runtime fills its own and calls agreement_all_gather),
  // and agreement_exchange(used) sends its first `used` bytes to every peer and returns every
  // rank's row in rank order (this rank's is agreement_row()), valid until the next exchange.
  // Each peer's row must arrive in room for a full row, so that a peer that disagrees on the
  // call, and so sends more or less, cannot overrun it.
  virtual char* agreement_row() { return nullptr; }
  virtual const char* const* agreement_exchange(std::size_t used) {
    static_cast<void>(used);
    return nullptr;
  }

  // Named algorithms of the operations that take them (takes_algorithm(): all_reduce,
  // broadcast, all_gather, reduce_scatter, all_to_all_single) besides the operation's own
  // choice (which is "default"): the library's (mpi: Open MPI's tuned algorithms, named as Open
  // MPI names them; gloo: ring and bcube for all_reduce), then the runtime's point-to-point one
  // (algorithms/: ring_p2p, linear_p2p for broadcast, pairwise_p2p for all_to_all_single) where
  // the operation is native (else its default already is that algorithm). `chorus tune`
  // measures each; "auto" and names like "mpi:ring" select one.
  virtual std::vector<std::string> algorithms(CollectiveKind op) const;
  // Runs `call` (an operation that takes an algorithm; a broadcast's buffer is `out`) with
  // algorithm `index` of algorithms(call.op); the runtime calls it only with count > 0 on more
  // than one rank and with the reduce op the backend takes (avg as sum). An override handles
  // its own names and passes the rest (index minus their number) to Backend::run_algorithm.
  virtual void run_algorithm(std::size_t index, const Call& call);

 protected:
  explicit Backend(const OperationTable& operations) : operations_(&operations) {}

 private:
  const OperationTable* operations_;
};

}  // namespace chorus::rt
