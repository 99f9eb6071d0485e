#pragma once
// Backend "gloo": Gloo's collectives over its TCP transport. Gloo is bootstrapped through our
// own rendezvous store (Debian's Gloo has no MPI context), so it works under both launchers.
// Gloo has no gatherv, scatterv, reduce_scatter or list all_to_all: those use the runtime's
// fallbacks over Gloo's point-to-point buffers.
// All-reduces up to 1 MiB use Gloo's classic gloo::AllreduceHalvingDoubling, one object per
// (count, dtype, op) kept in a small LRU cache (identical on every rank, since every rank makes
// the same calls), over a scratch buffer of ours (copy in, run, copy out) and over a second set
// of TCP connections: its buffers are registered once, so each message goes straight into the
// peer's memory, where Gloo's unbound buffers (new API, point to point) need a rendezvous per
// message; 4 ranks on 2 cores: ~2 ms instead of ~4.5 ms (BENCHMARKS-history.md, "Small messages").
//
// The backend's ideas, one file each (as Gloo's own gloo/transport/tcp/ is cut by concept):
//   gloo_backend.cpp       set-up: the device, the two full meshes over our store, every rank's pid
//   point_to_point.cpp     send / recv on unbound buffers; the application's messages with their size
//   classic_allreduce.cpp  the classic halving-doubling objects for small all-reduces, their cache
//   call_agreement.cpp     the runtime's agreement exchange: rows sent straight to each peer
//   reductions.cpp         all_reduce (classic or Gloo's ring / bcube) and reduce
//   collectives.cpp        barrier, broadcast, all_gather(v), gather, scatter
//   all_to_all.cpp         all_to_all_single and all_to_allv
//   failures.cpp           Gloo's exceptions as CommError / TimeoutError naming the peer at fault
//   waiting.cpp            the line a rank prints once when a collective has waited long in Gloo
#include <gloo/allreduce.h>
#include <gloo/context.h>
#include <gloo/reduce.h>
#include <gloo/transport/buffer.h>
#include <gloo/transport/device.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rt/backends/backends.h"
#include "rt/dtype.h"
#include "rt/errors.h"

namespace chorus::rt {

// The backend's own declarations (not chorus::rt::gloo: that would hide Gloo's namespace).
namespace gloo_backend {

constexpr std::uint64_t kP2PSlot = 0x636830000000ULL;          // fallback collectives
constexpr std::uint64_t kUserP2PSlot = 0x636831000000ULL;      // the application's send / recv
constexpr std::uint64_t kUserP2PSizeSlot = 0x636832000000ULL;  // their sizes, sent ahead
// All-reduces up to this size use Gloo's classic halving-doubling algorithm object over a
// cached scratch buffer (see ClassicAllReduce); larger ones the new API's ring, which is
// bandwidth-optimal. Measured side by side with plain Gloo (bench/rt/run_small_msgs.sh), the
// classic halving-doubling beats Gloo's ring at every size up to 1 MiB on 2 and 4 ranks (4 ranks,
// 1 MiB: ~3.3 ms against ~6.3 ms); at 4 MiB and above on 4 ranks the ring is ahead.
constexpr std::size_t kClassicAllReduceBytes = 1 << 20;
// The cache of classic algorithm objects, one per (dtype, reduce op, count): at most this many,
// least recently used evicted first. Each holds about 2 x its bytes (our scratch + Gloo's
// receive buffer), so at most ~32 MiB in all.
constexpr std::size_t kClassicCacheEntries = 16;
// On 2 ranks, calls of up to this many bytes per rank ride inside the agreement exchange
// (agreement_inline_bytes); its buffers take about 3 x this per backend.
constexpr std::size_t kRideBytes2 = 1 << 20;

// One small all-reduce shape as a Gloo classic algorithm object: AllreduceHalvingDoubling over
// a scratch buffer we own, its send/receive buffers registered with the peers once, at
// construction (a collective call: it takes slot numbers from the context). Each run copies the
// input in, runs, copies the result out. Gloo writes only this object's memory, never the
// caller's, so after a failure the caller's buffers are free at once.
class ClassicAllReduce {
 public:
  virtual ~ClassicAllReduce() = default;
  virtual void run(const void* in, void* out) = 0;
};

// The runtime's agreement exchange (rt/agreement.h) on up to kRowExchangeRanks ranks
// (call_agreement.cpp): this rank's row goes to every peer as one message, straight into a
// receive buffer the peer registered once, at construction (a collective call, like a classic
// object's), with room for a full row (agreement_row_bytes), so that a peer that disagrees on
// the call cannot overrun it whatever it sends; only the part of the row in use is sent (the
// 32-byte digest alone when the call does not ride). One message each way per call, where the
// classic halving-doubling all-reduce of the rows it replaces took two steps and two
// notifications each way (BENCHMARKS-history.md, "gloo: the agreement as one message each way").
// Two receive buffers per peer, used in turn: a peer can be at most one exchange ahead (it
// finishes exchange k+1 only with this rank's row of k+1, sent after this rank finished k), so
// it never writes the buffer this rank is still reading.
class RowExchange {
 public:
  RowExchange(const std::shared_ptr<gloo::Context>& context, std::size_t row_bytes);
  char* row() { return send_.data(); }
  // Sends row()'s first `used` bytes to every peer and waits for every peer's row; returns
  // every rank's row in rank order, valid until the next run.
  const char* const* run(std::size_t used);

 private:
  int rank_;
  int size_;
  std::size_t row_bytes_;
  std::vector<char> send_;
  std::vector<char> received_[2];  // per turn, one row per peer (peers in rank order, without this rank)
  std::vector<std::unique_ptr<gloo::transport::Buffer>> sends_[2], recvs_[2];  // per turn, per peer
  std::vector<const char*> rows_;
  int turn_ = 0;
};
constexpr int kRowExchangeRanks = 8;  // beyond: n - 1 messages each way; a classic all-reduce of the rows

// Gloo waits inside its own library, where the runtime cannot look: a thread (waiting.cpp) watches
// the collective in flight (its flight-recorder seq and operation, t_flight_entry) and prints one
// line when it has waited past wait_report_after(timeout), as shm's and mpi's waits do; the
// timeout error (failures.cpp) is the line when it gives up. To name the ranks that have not
// reached it, a rank whose collective has waited a quarter of that long publishes its seq in the
// store (one key per rank, overwritten: `<prefix>/at/<rank>` holds seq + 1), and the waiting rank
// reads its peers' keys: in the agreement exchange before the call every rank that reached the
// call waits too, so a peer whose key is behind has not reached it; past the agreement every rank
// has, and Gloo does not tell which one this rank waits for.
class WaitNotice {
 public:
  WaitNotice(int rank, int size, std::chrono::milliseconds timeout, std::weak_ptr<Store> store, std::string key_prefix);
  ~WaitNotice();
  WaitNotice(const WaitNotice&) = delete;
  WaitNotice& operator=(const WaitNotice&) = delete;
  // The operation's thread, around each wait in Gloo (guard()): `agreement` for the runtime's
  // agreement exchange before the call; `peer` that of a send or receive (else -1). False
  // (nothing to end) for point to point outside a collective: a receive may wait for as long as
  // the application likes.
  bool begin(const char* what, bool agreement, int peer);
  void end() { in_flight_.fetch_sub(1, std::memory_order_release); }
  struct Scope {
    WaitNotice* notice;
    Scope(WaitNotice* n, const char* what, bool agreement, int peer)
        : notice(n != nullptr && n->begin(what, agreement, peer) ? n : nullptr) {}
    ~Scope() {
      if (notice != nullptr) notice->end();
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
  };

 private:
  void watch();
  void mark(std::int64_t seq);
  std::string who(std::int64_t seq, bool agreement, bool agreed);
  int rank_, size_;
  std::chrono::milliseconds timeout_;
  std::weak_ptr<Store> store_;  // (a broken backend outlives the runtime's store)
  std::string key_prefix_;
  // Written by the operation's thread, read by the watch.
  std::atomic<int> in_flight_{0};
  std::atomic<std::int64_t> key_{-1};         // the collective: its seq (>= 0), a number of ours (<= -2), or none yet
  std::atomic<std::int64_t> seq_{-1};         // its flight-recorder seq (-1: not recorded)
  std::atomic<const char*> op_{""};           // its operation's name
  std::atomic<std::int64_t> since_ns_{0};     // when it started waiting (its first begin)
  std::atomic<std::int64_t> phase_ns_{0};     // when the current wait (agreement or call) started
  std::atomic<bool> agreement_{false};        // the current wait is the agreement exchange
  std::atomic<std::int64_t> agreed_key_{-1};  // the last collective whose agreement completed
  std::atomic<std::int64_t> unrecorded_{0};
  // The watch's own.
  std::int64_t marked_ = 0;  // the value of this rank's key in the store
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// A classic halving-doubling object for `count` elements of d reduced by op (classic_allreduce.cpp).
std::unique_ptr<ClassicAllReduce> make_classic(const std::shared_ptr<gloo::Context>& context, std::size_t count,
                                               DType d, ReduceOp op);

// Whether blocks of `counts` at `displs` lie back to back from 0 (collectives.cpp).
bool packed(const Counts& counts, const Counts& displs);

class GlooBackend final : public Backend {
 public:
  explicit GlooBackend(const BackendContext& ctx);

  std::string name() const override { return "gloo"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool native(CollectiveKind op) const override;
  // Signals `why` on every connection of both contexts (Gloo's own way to end a wait: the
  // operations in flight throw, failures.cpp).
  void interrupt(const std::string& why) override;

  void send(const void* buf, std::size_t bytes, int dst) override;
  void recv(void* buf, std::size_t bytes, int src) override;
  // The application's messages announce their size on a slot of their own, and the receive
  // compares it with its buffer before it posts the receive: a message larger than its receive
  // buffer would abort the process in Gloo's device thread, a smaller one would pass silently. A
  // refused message is never received: its sender times out naming this rank.
  void user_send(const void* buf, std::size_t bytes, int dst);
  void user_recv(void* buf, std::size_t bytes, int src);
  // The runtime's agreement (agreement.h) before every collective. Up to 8 ranks a RowExchange
  // made at start-up over the small connections: each rank's row sent to each peer as one
  // message (only the part in use). Beyond, its fixed-size all-gather as an all-reduce (sum) of
  // each rank's row among zeros, on a classic halving-doubling object. Gloo's small messages
  // cost by the message, not the byte (~0.1-0.3 ms each on loopback, against ~1 us for 4 KiB
  // more), so its rows carry calls of up to 4 KiB; on 2 ranks up to kRideBytes2: there an
  // all-gather of the rows moves the bytes of an all-reduce, in one message each way instead
  // of halving-doubling's two steps (and notifications), and a call that rides needs no
  // second exchange after the agreement (BENCHMARKS-history.md, "gloo: the agreement as one message
  // each way").
  std::size_t agreement_inline_bytes() const override {
    return size_ == 2 ? kRideBytes2 : size_ <= 8 ? 4096 : size_ <= 32 ? 512 : 0;
  }
  void agreement_all_gather(const void* mine, void* all, std::size_t bytes) override;
  char* agreement_row() override { return exchange_ ? exchange_->row() : nullptr; }
  const char* const* agreement_exchange(std::size_t used) override;
  // Gloo's pairs lock internally; operations on distinct slots may run from several threads.
  bool concurrent_point_to_point() const override { return true; }

  void send_on(const void* buf, std::size_t bytes, int dst, std::uint64_t slot);
  void recv_on(void* buf, std::size_t bytes, int src, std::uint64_t slot);
  void send_recv(const void* sbuf, std::size_t sbytes, int dst, void* rbuf, std::size_t rbytes, int src) override;

  void barrier();
  void broadcast(void* buf, std::size_t count, DType d, int root);
  void all_reduce(const void* in, void* out, std::size_t count, DType d, ReduceOp op);
  // Gloo's own algorithms of gloo::allreduce, whatever the size (the default above takes the
  // classic halving-doubling up to 1 MiB, then ring).
  std::vector<std::string> algorithms(CollectiveKind op) const override;
  void run_algorithm(std::size_t index, const Call& c) override;
  void reduce(const void* in, void* out, std::size_t count, DType d, ReduceOp op, int root);
  void all_gather(const void* in, void* out, std::size_t count, DType d);
  void all_gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs, DType d);
  void gather(const void* in, void* out, std::size_t count, DType d, int root);
  void scatter(const void* in, void* out, std::size_t count, DType d, int root);
  void all_to_all_single(const void* in, void* out, std::size_t count, DType d);
  void all_to_allv(const void* in, const Counts& sc, const Counts& sd, void* out, const Counts& rc, const Counts& rd,
                   DType d);

 private:
  // The operations' table: each kind on this backend's method, or the generic algorithm.
  static const OperationTable& operations();

  // Turns Gloo's exceptions into CommError / TimeoutError naming the failure and, where it
  // can be told, the rank: `peer` for point to point, else a peer process found dead. Gloo's
  // unbound buffers are destroyed (while the exception unwinds out of f) before this returns,
  // and Gloo never writes a destroyed unbound buffer's memory, so the operation has ended.
  template <typename F>
  void guard(const char* what, F&& f, int peer = -1, bool agreement = false) {
    if (peer < 0) ++collectives_;
    const WaitNotice::Scope watched(notice_.get(), what, agreement, peer);
    try {
      f();
    } catch (const CommError&) {
      throw;
    } catch (const std::exception& e) {
      fail(what, e.what(), peer);
    }
  }
  // The body of guard's last handler (failures.cpp): the error naming the failure and whom.
  [[noreturn]] void fail(const char* what, const std::string& gloo_msg, int peer);

  // The ranks that did not reach the collective this rank timed out in: Gloo's errors do not say
  // whom a collective waited for. Every rank that times out in it arrives at a store barrier
  // named after it (the backend's count of collective calls, the same on ranks that agree), then
  // looks for up to a second (the others time out about when it did) for the ranks that never
  // arrive. Empty when the store cannot tell.
  std::vector<int> ranks_not_here();

  std::uint32_t next_tag() { return tag_++ & 0xffffff; }

  // The classic all-reduce for (count, d, op), from the cache or built now. Every rank makes the
  // same calls in the same order (collectives are ordered on one lane), so every rank hits,
  // misses and evicts alike: a rank builds an object (its slots) exactly when its peers do.
  // Evicting is safe: the evicted object's last run returned on this rank, which means every
  // message to its buffers arrived (the run waits for all of them, including the peers' last
  // notifications, which follow their last receipt of ours), and no peer uses it again.
  ClassicAllReduce& classic_for(std::size_t count, DType d, ReduceOp op);

  // Linux starts each TCP connection with a receive window of about 64 KiB and grows it
  // (autotuning) as bulk data arrives. On loopback, whose MSS is 65483 bytes, that first window
  // is one segment: until it has grown, a message larger than the free window waits for a
  // delayed ACK (40 ms or more). Halving-doubling at 64-256 KiB stalled there, in plain Gloo as
  // here (4 ranks: 64 KiB all-reduces of 13-15 ms mean, 256 KiB of 71-73 ms, against 1.7-2.8 ms
  // with the windows grown or with an MSS of 1448; docs/runtime-backends.md). So the classic
  // connections carry one 1 MiB all-reduce at start-up, before any call of the program's, and
  // the object is then evicted. Autotuning opens the windows during it; the warm-up may itself
  // wait for a delayed ACK once (~60 ms per init() on 4 ranks, measured), instead of the
  // program's calls waiting again and again.
  void warm_up_classic();

  // Calls f with a value of the unsigned type as wide as one element of d.
  template <typename F>
  static void with_element(DType d, F&& f) {
    switch (dtype_bytes(d)) {
      case 1:
        f(std::uint8_t{});
        break;
      case 2:
        f(std::uint16_t{});
        break;
      case 4:
        f(std::uint32_t{});
        break;
      default:
        f(std::uint64_t{});
        break;
    }
  }

  template <typename T>
  void all_reduce_typed(T, const void* in, void* out, std::size_t count, DType d, ReduceOp op,
                        gloo::AllreduceOptions::Algorithm algorithm = gloo::AllreduceOptions::Algorithm::UNSPECIFIED) {
    gloo::AllreduceOptions opts(context_);
    opts.setAlgorithm(algorithm);
    if (in != out) opts.setInput(const_cast<T*>(static_cast<const T*>(in)), count);
    opts.setOutput(static_cast<T*>(out), count);
    opts.setReduceFunction(
        [d, op](void* o, const void* a, const void* b, std::size_t n) { reduce_into(d, op, o, a, b, n); });
    opts.setTag(next_tag());
    opts.setTimeout(timeout_);
    gloo::allreduce(opts);
  }

  template <typename T>
  void reduce_typed(T, const void* in, void* out, std::size_t count, DType d, ReduceOp op, int root) {
    gloo::ReduceOptions opts(context_);
    if (in != out) opts.setInput(const_cast<T*>(static_cast<const T*>(in)), count);
    opts.setOutput(static_cast<T*>(out), count);
    opts.setRoot(root);
    opts.setReduceFunction(
        [d, op](void* o, const void* a, const void* b, std::size_t n) { reduce_into(d, op, o, a, b, n); });
    opts.setTag(next_tag());
    opts.setTimeout(timeout_);
    gloo::reduce(opts);
  }

  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  Store* store_;  // the rendezvous store: which ranks a timed-out collective waited for
  std::string key_prefix_;
  std::uint64_t collectives_ = 0;               // collective calls (guard() without a peer) so far
  std::function<std::string(int)> failure_of_;  // BackendContext::failure_of
  std::shared_ptr<const AbortMark> aborted_;    // BackendContext::aborted
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;
  std::shared_ptr<gloo::Context> small_context_;  // the classic all-reduces' own connections
  std::vector<pid_t> pids_;                       // every rank's pid (one host), else empty
  struct ClassicEntry {
    std::size_t count;
    DType dtype;
    ReduceOp op;
    std::unique_ptr<ClassicAllReduce> algorithm;
  };
  std::list<ClassicEntry> classic_;              // most recently used first
  std::unique_ptr<ClassicAllReduce> agreement_;  // agreement_all_gather's object (more than 8 ranks)
  std::vector<char> agreement_rows_;             // its input: this rank's row among zeros
  std::unique_ptr<RowExchange> exchange_;        // agreement_exchange's (2-8 ranks)
  std::uint32_t tag_ = 1;
  std::unique_ptr<WaitNotice> notice_;  // (more than one rank)
};

}  // namespace gloo_backend

}  // namespace chorus::rt
