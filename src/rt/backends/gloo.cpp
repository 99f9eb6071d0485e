// Backend "gloo": Gloo's collectives over its TCP transport. Gloo is bootstrapped through our
// own rendezvous store (Debian's Gloo has no MPI context), so it works under both launchers.
// Gloo has no gatherv, scatterv, reduce_scatter or list all_to_all: those use the runtime's
// fallbacks over Gloo's point-to-point buffers.
// All-reduces up to 1 MiB use Gloo's classic gloo::AllreduceHalvingDoubling, one object per
// (count, dtype, op) kept in a small LRU cache (identical on every rank, since every rank makes
// the same calls), over a scratch buffer of ours (copy in, run, copy out) and over a second set
// of TCP connections: its buffers are registered once, so each message goes straight into the
// peer's memory, where Gloo's unbound buffers (new API, point to point) need a rendezvous per
// message; 4 ranks on 2 cores: ~2 ms instead of ~4.5 ms (BENCHMARKS.md, "Small messages").
#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <list>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <cstring>
#include <fmt/format.h>

#include "rt/agreement.h"
#include "rt/backends/agreement.h"
#include "rt/backends/backends.h"
#include "rt/dtype.h"
#include "rt/errors.h"
#include "rt/transport/shm/futex.h"  // process_dead

namespace chorus::rt {

namespace {

// Gloo's Store interface over ours, with keys under a prefix.
class GlooStore final : public gloo::rendezvous::Store {
 public:
  GlooStore(chorus::rt::Store& store, std::string prefix, std::chrono::milliseconds timeout)
      : store_(store), prefix_(std::move(prefix)), timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override { store_.set(prefix_ + key, data); }
  std::vector<char> get(const std::string& key) override { return store_.get(prefix_ + key, timeout_); }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    for (const auto& k : keys) store_.get(prefix_ + k, timeout);
  }

 private:
  chorus::rt::Store& store_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
};

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

// Gloo's classic reduction functions are plain function pointers: one per (dtype, op), all
// through our reduce_into (f16 / bf16, integer wrap-around, the same results as everywhere).
template <typename T, DType D, ReduceOp O>
void classic_reduce(T* x, const T* y, std::size_t n) {
  reduce_into(D, O, x, x, y, n);
}

// The unsigned type as wide as one element of D (Gloo's classic algorithms only move and slice
// elements of T; the arithmetic is classic_reduce's).
template <DType D>
using Storage = std::conditional_t<
    D == DType::f16 || D == DType::bf16, std::uint16_t,
    std::conditional_t<D == DType::f32 || D == DType::i32, std::uint32_t,
                       std::conditional_t<D == DType::f64 || D == DType::i64, std::uint64_t, std::uint8_t>>>;

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

template <typename T>
class ClassicHalvingDoubling final : public ClassicAllReduce {
 public:
  ClassicHalvingDoubling(const std::shared_ptr<gloo::Context>& context, std::size_t count,
                         typename gloo::ReductionFunction<T>::Function* fn)
      : scratch_(count),
        fn_(gloo::CUSTOM, fn),
        algorithm_(std::make_unique<gloo::AllreduceHalvingDoubling<T>>(context, std::vector<T*>{scratch_.data()},
                                                                       static_cast<int>(count), &fn_)) {}
  void run(const void* in, void* out) override {
    const std::size_t bytes = scratch_.size() * sizeof(T);
    std::memcpy(scratch_.data(), in, bytes);
    algorithm_->run();
    std::memcpy(out, scratch_.data(), bytes);
  }

 private:
  std::vector<T> scratch_;
  gloo::ReductionFunction<T> fn_;
  // Gloo's Algorithm has a noexcept(false) destructor: held by pointer.
  std::unique_ptr<gloo::AllreduceHalvingDoubling<T>> algorithm_;
};

template <DType D>
std::unique_ptr<ClassicAllReduce> make_classic_typed(const std::shared_ptr<gloo::Context>& context, std::size_t count,
                                                     ReduceOp op) {
  using T = Storage<D>;
  typename gloo::ReductionFunction<T>::Function* fn = nullptr;
  switch (op) {
    case ReduceOp::prod:
      fn = &classic_reduce<T, D, ReduceOp::prod>;
      break;
    case ReduceOp::min:
      fn = &classic_reduce<T, D, ReduceOp::min>;
      break;
    case ReduceOp::max:
      fn = &classic_reduce<T, D, ReduceOp::max>;
      break;
    default:
      fn = &classic_reduce<T, D, ReduceOp::sum>;
      break;  // sum; avg arrives as sum
  }
  return std::make_unique<ClassicHalvingDoubling<T>>(context, count, fn);
}

std::unique_ptr<ClassicAllReduce> make_classic(const std::shared_ptr<gloo::Context>& context, std::size_t count,
                                               DType d, ReduceOp op) {
  switch (d) {
    case DType::f16:
      return make_classic_typed<DType::f16>(context, count, op);
    case DType::bf16:
      return make_classic_typed<DType::bf16>(context, count, op);
    case DType::f32:
      return make_classic_typed<DType::f32>(context, count, op);
    case DType::f64:
      return make_classic_typed<DType::f64>(context, count, op);
    case DType::i8:
      return make_classic_typed<DType::i8>(context, count, op);
    case DType::u8:
      return make_classic_typed<DType::u8>(context, count, op);
    case DType::i32:
      return make_classic_typed<DType::i32>(context, count, op);
    case DType::i64:
      return make_classic_typed<DType::i64>(context, count, op);
  }
  throw CommError(fmt::format("gloo all_reduce: unknown dtype {}", static_cast<int>(d)));
}

bool packed(const Counts& counts, const Counts& displs) {
  std::size_t at = 0;
  for (std::size_t j = 0; j < counts.size(); ++j) {
    if (displs[j] != at) return false;
    at += counts[j];
  }
  return true;
}

class GlooBackend final : public Backend {
 public:
  explicit GlooBackend(const BackendContext& ctx)
      : rank_(ctx.rank),
        size_(ctx.size),
        timeout_(ctx.timeout),
        store_(ctx.store),
        key_prefix_(ctx.key_prefix),
        failure_of_(ctx.failure_of) {
    // Gloo writes to its sockets without MSG_NOSIGNAL: a peer that died would kill this rank
    // with SIGPIPE instead of letting the operation fail with an error. Ignore SIGPIPE unless
    // the program installed its own handler.
    struct sigaction current {};
    if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);
    try {
      gloo::transport::tcp::attr attr;
      attr.hostname = ctx.gloo_host;
      device_ = gloo::transport::tcp::CreateDevice(attr);
      auto context = std::make_shared<gloo::rendezvous::Context>(rank_, size_);
      context->setTimeout(timeout_);
      GlooStore store(*ctx.store, ctx.key_prefix + "/", timeout_);
      // Every rank's pid, to name a dead peer when an operation fails (one host only). Set
      // before connecting: connectFullMesh returns after every rank has begun connecting.
      if (ctx.single_host)
        ctx.store->set_string(ctx.key_prefix + "/pid/" + std::to_string(rank_), std::to_string(::getpid()));
      context->connectFullMesh(store, device_);
      context_ = context;
      // A second set of connections (same device thread) for the classic small all-reduces:
      // their quick small exchanges in both directions put a TCP connection into delayed-ACK
      // mode, and bulk transfers on that connection (Gloo's ring) then stall ~40 ms at every
      // full send buffer (measured: a 1 MiB all-reduce after an 8 B one, 4 ranks, 0.5 s
      // instead of 8 ms). On their own connections the two kinds of traffic do not meet.
      auto small = std::make_shared<gloo::rendezvous::Context>(rank_, size_);
      small->setTimeout(timeout_);
      GlooStore small_store(*ctx.store, ctx.key_prefix + "/small/", timeout_);
      small->connectFullMesh(small_store, device_);
      small_context_ = small;
      if (size_ > 1) {  // before the warm-up, whose exchange follows every rank's registration
        agreement_rows_.resize(agreement_row_bytes(*this) * static_cast<std::size_t>(size_));
        agreement_ =
            make_classic(small_context_, agreement_rows_.size() / sizeof(std::uint64_t), DType::i64, ReduceOp::sum);
      }
      warm_up_classic();
      if (ctx.single_host)
        for (int j = 0; j < size_; ++j)
          pids_.push_back(std::stoi(ctx.store->get_string(ctx.key_prefix + "/pid/" + std::to_string(j), timeout_)));
    } catch (const CommError&) {
      throw;
    } catch (const std::exception& e) {
      throw CommError(
          fmt::format("gloo: cannot connect rank {} of {} on {}: {}", rank_, size_, ctx.gloo_host, e.what()));
    }
  }

  std::string name() const override { return "gloo"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool native(CollectiveKind op) const override {
    switch (op) {
      case CollectiveKind::kGatherv:
      case CollectiveKind::kScatterv:
      case CollectiveKind::kReduceScatter:
      case CollectiveKind::kAllToAll:
        return false;
      default:
        return true;
    }
  }

  void send(const void* buf, std::size_t bytes, int dst) override { send_on(buf, bytes, dst, kP2PSlot); }
  void recv(void* buf, std::size_t bytes, int src) override { recv_on(buf, bytes, src, kP2PSlot); }
  // The application's messages announce their size on a slot of their own, and the receive
  // compares it with its buffer before it posts the receive: a message larger than its receive
  // buffer would abort the process in Gloo's device thread, a smaller one would pass silently. A
  // refused message is never received: its sender times out naming this rank.
  void user_send(const void* buf, std::size_t bytes, int dst) override {
    guard(
        "send",
        [&] {
          std::uint64_t size = bytes;
          auto header = context_->createUnboundBuffer(&size, sizeof size);
          header->send(dst, kUserP2PSizeSlot);
          if (bytes > 0) {
            auto ub = context_->createUnboundBuffer(const_cast<void*>(buf), bytes);
            ub->send(dst, kUserP2PSlot);
            ub->waitSend(timeout_);
          }
          header->waitSend(timeout_);
        },
        dst);
  }
  void user_recv(void* buf, std::size_t bytes, int src) override {
    guard(
        "recv",
        [&] {
          std::uint64_t size = 0;
          auto header = context_->createUnboundBuffer(&size, sizeof size);
          header->recv(src, kUserP2PSizeSlot);
          header->waitRecv(timeout_);
          if (size != bytes) [[unlikely]]
            throw_receive_size_mismatch("gloo", "recv", rank_, src, bytes, size);
          if (bytes == 0) return;
          auto ub = context_->createUnboundBuffer(buf, bytes);
          ub->recv(src, kUserP2PSlot);
          ub->waitRecv(timeout_);
        },
        src);
  }
  // The runtime's agreement (agreement.h) before every collective: its fixed-size all-gather as
  // an all-reduce (sum) of each rank's row among zeros, on a classic halving-doubling object
  // made at start-up over the small connections: one small exchange, like the small all-reduces.
  // Gloo's small messages cost by the message, not the byte (~0.1-0.3 ms each on loopback,
  // against ~1 us for 4 KiB more), so its rows carry calls of up to 4 KiB.
  std::size_t agreement_inline_bytes() const override { return size_ <= 8 ? 4096 : size_ <= 32 ? 512 : 0; }
  void agreement_all_gather(const void* mine, void* all, std::size_t bytes) override {
    if (!agreement_ || bytes * static_cast<std::size_t>(size_) != agreement_rows_.size())
      return Backend::agreement_all_gather(mine, all, bytes);
    guard("all_reduce", [&] {
      std::memset(agreement_rows_.data(), 0, agreement_rows_.size());
      std::memcpy(agreement_rows_.data() + static_cast<std::size_t>(rank_) * bytes, mine, bytes);
      agreement_->run(agreement_rows_.data(), all);
    });
  }
  // Gloo's pairs lock internally; operations on distinct slots may run from several threads.
  bool concurrent_point_to_point() const override { return true; }

  void send_on(const void* buf, std::size_t bytes, int dst, std::uint64_t slot) {
    if (bytes == 0) return;
    guard(
        "send",
        [&] {
          auto ub = context_->createUnboundBuffer(const_cast<void*>(buf), bytes);
          ub->send(dst, slot);
          ub->waitSend(timeout_);
        },
        dst);
  }
  void recv_on(void* buf, std::size_t bytes, int src, std::uint64_t slot) {
    if (bytes == 0) return;
    guard(
        "recv",
        [&] {
          auto ub = context_->createUnboundBuffer(buf, bytes);
          ub->recv(src, slot);
          ub->waitRecv(timeout_);
        },
        src);
  }
  void send_recv(const void* sbuf, std::size_t sbytes, int dst, void* rbuf, std::size_t rbytes, int src) override {
    guard("send_recv", [&] {
      std::unique_ptr<gloo::transport::UnboundBuffer> in, out;
      if (rbytes > 0) {
        in = context_->createUnboundBuffer(rbuf, rbytes);
        in->recv(src, kP2PSlot);
      }
      if (sbytes > 0) {
        out = context_->createUnboundBuffer(const_cast<void*>(sbuf), sbytes);
        out->send(dst, kP2PSlot);
      }
      if (out) out->waitSend(timeout_);
      if (in) in->waitRecv(timeout_);
    });
  }

  void barrier() override {
    guard("barrier", [&] {
      gloo::BarrierOptions opts(context_);
      opts.setTag(next_tag());
      opts.setTimeout(timeout_);
      gloo::barrier(opts);
    });
  }

  void broadcast(void* buf, std::size_t count, DType d, int root) override {
    guard("broadcast", [&] {
      gloo::BroadcastOptions opts(context_);
      opts.setOutput(static_cast<std::uint8_t*>(buf), count * dtype_bytes(d));
      opts.setRoot(root);
      opts.setTag(next_tag());
      opts.setTimeout(timeout_);
      gloo::broadcast(opts);
    });
  }

  void all_reduce(const void* in, void* out, std::size_t count, DType d, ReduceOp op) override {
    // Up to 1 MiB: Gloo's ring splits even a few bytes into 2(n-1) segment exchanges, each
    // with its own send/receive notifications; the classic halving-doubling object needs
    // log2(n) exchanges each way into buffers the peers registered in advance (no rendezvous
    // per message, as Gloo's unbound buffers do).
    if (count * dtype_bytes(d) <= kClassicAllReduceBytes) {
      if (count == 0 || size_ == 1) {
        if (in != out && count > 0) std::memcpy(out, in, count * dtype_bytes(d));
        return;
      }
      guard("all_reduce", [&] { classic_for(count, d, op).run(in, out); });
      return;
    }
    guard("all_reduce", [&] { with_element(d, [&](auto tag) { all_reduce_typed(tag, in, out, count, d, op); }); });
  }

  // Gloo's own algorithms of gloo::allreduce, whatever the size (the default above takes the
  // classic halving-doubling up to 1 MiB, then ring).
  std::vector<std::string> algorithms(CollectiveKind op) const override {
    std::vector<std::string> names;
    if (op == CollectiveKind::kAllReduce) names = {"ring", "bcube"};
    for (auto& n : Backend::algorithms(op)) names.push_back(n);
    return names;
  }
  void run_algorithm(std::size_t index, const Call& c) override {
    if (c.op != CollectiveKind::kAllReduce) return Backend::run_algorithm(index, c);
    if (index >= 2) return Backend::run_algorithm(index - 2, c);
    const auto algorithm =
        index == 0 ? gloo::AllreduceOptions::Algorithm::RING : gloo::AllreduceOptions::Algorithm::BCUBE;
    guard("all_reduce", [&] {
      with_element(c.dtype,
                   [&](auto tag) { all_reduce_typed(tag, c.in, c.out, c.count, c.dtype, c.reduce_op, algorithm); });
    });
  }

  void reduce(const void* in, void* out, std::size_t count, DType d, ReduceOp op, int root) override {
    guard("reduce", [&] {
      // Gloo's reduce writes the output on every rank: give non-roots a scratch buffer.
      std::vector<char> scratch;
      void* target = out;
      if (rank_ != root) {
        scratch.resize(count * dtype_bytes(d));
        target = scratch.data();
      }
      with_element(d, [&](auto tag) { reduce_typed(tag, in, target, count, d, op, root); });
    });
  }

  void all_gather(const void* in, void* out, std::size_t count, DType d) override {
    const std::size_t bytes = count * dtype_bytes(d);
    guard("all_gather", [&] {
      gloo::AllgatherOptions opts(context_);
      auto* o = static_cast<std::uint8_t*>(out);
      if (in != o + static_cast<std::size_t>(rank_) * bytes)
        opts.setInput(const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(in)), bytes);
      opts.setOutput(o, bytes * static_cast<std::size_t>(size_));
      opts.setTag(next_tag());
      opts.setTimeout(timeout_);
      gloo::allgather(opts);
    });
  }

  void all_gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                   DType d) override {
    const std::size_t eb = dtype_bytes(d);
    guard("all_gatherv", [&] {
      std::vector<std::size_t> bytes(size_);
      std::size_t total = 0;
      for (int j = 0; j < size_; ++j) total += bytes[j] = counts[j] * eb;
      const bool direct = packed(counts, displs);
      std::vector<std::uint8_t> tmp(direct ? 0 : total);
      auto* o = direct ? static_cast<std::uint8_t*>(out) : tmp.data();
      std::vector<std::uint8_t> in_copy(static_cast<const std::uint8_t*>(in),
                                        static_cast<const std::uint8_t*>(in) + count * eb);
      gloo::AllgathervOptions opts(context_);
      opts.setInput(in_copy.data(), count * eb);
      opts.setOutput(o, bytes);
      opts.setTag(next_tag());
      opts.setTimeout(timeout_);
      gloo::allgatherv(opts);
      if (!direct) {
        std::size_t at = 0;
        for (int j = 0; j < size_; ++j) {
          if (bytes[j] > 0) std::memcpy(static_cast<char*>(out) + displs[j] * eb, tmp.data() + at, bytes[j]);
          at += bytes[j];
        }
      }
    });
  }

  void gather(const void* in, void* out, std::size_t count, DType d, int root) override {
    const std::size_t bytes = count * dtype_bytes(d);
    guard("gather", [&] {
      gloo::GatherOptions opts(context_);
      opts.setInput(const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(in)), bytes);
      if (rank_ == root) opts.setOutput(static_cast<std::uint8_t*>(out), bytes * static_cast<std::size_t>(size_));
      opts.setRoot(root);
      opts.setTag(next_tag());
      opts.setTimeout(timeout_);
      gloo::gather(opts);
    });
  }

  void scatter(const void* in, void* out, std::size_t count, DType d, int root) override {
    const std::size_t bytes = count * dtype_bytes(d);
    guard("scatter", [&] {
      gloo::ScatterOptions opts(context_);
      std::vector<std::uint8_t*> ptrs;
      if (rank_ == root) {
        for (int j = 0; j < size_; ++j)
          ptrs.push_back(const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(in)) +
                         static_cast<std::size_t>(j) * bytes);
        opts.setInputs(ptrs, bytes);
      }
      opts.setOutput(static_cast<std::uint8_t*>(out), bytes);
      opts.setRoot(root);
      opts.setTag(next_tag());
      opts.setTimeout(timeout_);
      gloo::scatter(opts);
    });
  }

  void all_to_all_single(const void* in, void* out, std::size_t count, DType d) override {
    const std::size_t bytes = count * dtype_bytes(d) * static_cast<std::size_t>(size_);
    guard("all_to_all_single", [&] {
      gloo::AlltoallOptions opts(context_);
      opts.setInput(const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(in)), bytes);
      opts.setOutput(static_cast<std::uint8_t*>(out), bytes);
      opts.setTag(next_tag());
      opts.setTimeout(timeout_);
      gloo::alltoall(opts);
    });
  }

  void all_to_allv(const void* in, const Counts& sc, const Counts& sd, void* out, const Counts& rc, const Counts& rd,
                   DType d) override {
    const std::size_t eb = dtype_bytes(d);
    guard("all_to_allv", [&] {
      const bool in_packed = packed(sc, sd), out_packed = packed(rc, rd);
      std::vector<std::int64_t> sbytes(size_), rbytes(size_);
      std::size_t stotal = 0, rtotal = 0;
      for (int j = 0; j < size_; ++j) {
        sbytes[j] = static_cast<std::int64_t>(sc[j] * eb);
        rbytes[j] = static_cast<std::int64_t>(rc[j] * eb);
        stotal += sc[j] * eb;
        rtotal += rc[j] * eb;
      }
      std::vector<std::uint8_t> sbuf(in_packed ? 0 : stotal), rbuf(out_packed ? 0 : rtotal);
      if (!in_packed) {
        std::size_t at = 0;
        for (int j = 0; j < size_; ++j) {
          if (sc[j] > 0) std::memcpy(sbuf.data() + at, static_cast<const char*>(in) + sd[j] * eb, sc[j] * eb);
          at += sc[j] * eb;
        }
      }
      // Gloo rejects null buffers: give it a byte when a side is empty.
      std::uint8_t dummy_in = 0, dummy_out = 0;
      auto* ip = in_packed ? const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(in)) : sbuf.data();
      auto* op = out_packed ? static_cast<std::uint8_t*>(out) : rbuf.data();
      gloo::AlltoallvOptions opts(context_);
      opts.setInput(stotal > 0 ? ip : &dummy_in, sbytes);
      opts.setOutput(rtotal > 0 ? op : &dummy_out, rbytes);
      opts.setTag(next_tag());
      opts.setTimeout(timeout_);
      gloo::alltoallv(opts);
      if (!out_packed) {
        std::size_t at = 0;
        for (int j = 0; j < size_; ++j) {
          if (rc[j] > 0) std::memcpy(static_cast<char*>(out) + rd[j] * eb, rbuf.data() + at, rc[j] * eb);
          at += rc[j] * eb;
        }
      }
    });
  }

 private:
  // Turns Gloo's exceptions into CommError / TimeoutError naming the failure and, where it
  // can be told, the rank: `peer` for point to point, else a peer process found dead. Gloo's
  // unbound buffers are destroyed (while the exception unwinds out of f) before this returns,
  // and Gloo never writes a destroyed unbound buffer's memory, so the operation has ended.
  template <typename F>
  void guard(const char* what, F&& f, int peer = -1) {
    if (peer < 0) ++collectives_;
    try {
      f();
    } catch (const CommError&) {
      throw;
    } catch (const std::exception& e) {
      const std::string gloo_msg = e.what();
      const bool timed_out = gloo_msg.find("Timed out") != std::string::npos ||
                             gloo_msg.find("timed out") != std::string::npos ||
                             gloo_msg.find("Timeout") != std::string::npos ||
                             gloo_msg.find("timeout") != std::string::npos;  // classic: "Read timeout"
      // A dying process closes its sockets a moment before it becomes a zombie: after a
      // broken connection, look for the dead peer for up to 200 ms.
      std::string dead;
      for (int attempt = 0; dead.empty() && attempt < (timed_out ? 1 : 20); ++attempt) {
        if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        for (int j = 0; j < static_cast<int>(pids_.size()); ++j)
          if (j != rank_ && process_dead(pids_[j]))
            dead += fmt::format("{}{}", dead.empty() ? "" : ", ", gone_peer(failure_of_, j, pids_[j]));
      }
      if (!dead.empty()) throw CommError(fmt::format("gloo {} on rank {}: {} (gloo: {})", what, rank_, dead, gloo_msg));
      if (timed_out) {
        const std::vector<int> stuck = peer >= 0 ? std::vector<int>{} : ranks_not_here();
        const std::string who = peer >= 0       ? fmt::format("rank {}", peer)
                                : stuck.empty() ? std::string("a peer")
                                                : fmt::format("rank{} {} (which never reached this collective)",
                                                              stuck.size() > 1 ? "s" : "", rank_list(stuck));
        throw TimeoutError(
            fmt::format("gloo {} on rank {}: timed out waiting for {} after {} ms (the "
                        "peer is stuck or the ranks disagree on the call; gloo: {})",
                        what, rank_, who, timeout_.count(), gloo_msg));
      }
      throw CommError(fmt::format("gloo {} on rank {}{}: {}", what, rank_,
                                  peer >= 0 ? fmt::format(" with rank {}", peer) : std::string(), gloo_msg));
    }
  }

  // The ranks that did not reach the collective this rank timed out in: Gloo's errors do not say
  // whom a collective waited for. Every rank that times out in it arrives at a store barrier
  // named after it (the backend's count of collective calls, the same on ranks that agree), then
  // looks for up to a second (the others time out about when it did) for the ranks that never
  // arrive. Empty when the store cannot tell.
  std::vector<int> ranks_not_here() {
    if (store_ == nullptr) return {};
    const std::string name = fmt::format("{}/timed-out/{}", key_prefix_, collectives_);
    try {
      store_->arrive(name, rank_);
      std::vector<int> missing = store_->missing_ranks(name, size_);
      for (int i = 0; i < 10 && !missing.empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        missing = store_->missing_ranks(name, size_);
      }
      return missing;
    } catch (const std::exception&) {
      return {};
    }
  }

  std::uint32_t next_tag() { return tag_++ & 0xffffff; }

  // The classic all-reduce for (count, d, op), from the cache or built now. Every rank makes the
  // same calls in the same order (collectives are ordered on one lane), so every rank hits,
  // misses and evicts alike: a rank builds an object (its slots) exactly when its peers do.
  // Evicting is safe: the evicted object's last run returned on this rank, which means every
  // message to its buffers arrived (the run waits for all of them, including the peers' last
  // notifications, which follow their last receipt of ours), and no peer uses it again.
  ClassicAllReduce& classic_for(std::size_t count, DType d, ReduceOp op) {
    for (auto it = classic_.begin(); it != classic_.end(); ++it) {
      if (it->count == count && it->dtype == d && it->op == op) {
        classic_.splice(classic_.begin(), classic_, it);
        return *classic_.front().algorithm;
      }
    }
    if (classic_.size() >= kClassicCacheEntries) classic_.pop_back();
    classic_.push_front({count, d, op, make_classic(small_context_, count, d, op)});
    // Every rank must have registered the new object's buffers before any sends to them (Gloo's
    // device thread would spin on a message for an unknown slot, holding up everything else on
    // that connection), and all must agree on the shape (same slots, different sizes would be
    // out-of-bounds writes that Gloo stops with an abort). One exchange does both: an all-reduce
    // (max, as i64) of the key and its complement is the key everywhere only if every rank has
    // that key (~ reverses the order, so max(~key) = ~min(key)).
    const std::uint64_t key = (static_cast<std::uint64_t>(count) << 16) | (static_cast<std::uint64_t>(d) << 8) |
                              static_cast<std::uint64_t>(op);
    std::int64_t keys[2] = {static_cast<std::int64_t>(key), static_cast<std::int64_t>(~key)};
    all_reduce_typed(std::uint64_t{}, keys, keys, 2, DType::i64, ReduceOp::max);  // any world size
    if (keys[0] != static_cast<std::int64_t>(key) || keys[1] != static_cast<std::int64_t>(~key)) {
      throw CommError(
          fmt::format("gloo all_reduce on rank {}: the ranks disagree on the call (this rank: "
                      "{} elements of {}, {}); run with CHORUS_RT_CHECK=1 to see where",
                      rank_, count, to_string(d), to_string(op)));
    }
    return *classic_.front().algorithm;
  }

  // Linux starts each TCP connection with a receive window of about 64 KiB and grows it
  // (autotuning) as bulk data arrives. On loopback, whose MSS is 65483 bytes, that first window
  // is one segment: until it has grown, a message larger than the free window waits for a
  // delayed ACK (40 ms or more). Halving-doubling at 64-256 KiB stalled there, in plain Gloo as
  // here (4 ranks: 64 KiB all-reduces of 13-15 ms mean, 256 KiB of 71-73 ms, against 1.7-2.8 ms
  // with the windows grown or with an MSS of 1448; docs/runtime.md). So the classic
  // connections carry one 1 MiB all-reduce at start-up, before any call of the program's, and
  // the object is then evicted. Autotuning opens the windows during it; the warm-up may itself
  // wait for a delayed ACK once (~60 ms per init() on 4 ranks, measured), instead of the
  // program's calls waiting again and again.
  void warm_up_classic() {
    if (size_ < 2) return;
    constexpr std::size_t kCount = kClassicAllReduceBytes / sizeof(float);
    std::vector<float> x(kCount, 0.0f);
    classic_for(kCount, DType::f32, ReduceOp::sum).run(x.data(), x.data());
    classic_.pop_front();  // safe as any eviction (classic_for)
  }

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
  std::unique_ptr<ClassicAllReduce> agreement_;  // agreement_all_gather's object
  std::vector<char> agreement_rows_;             // its input: this rank's row among zeros
  std::uint32_t tag_ = 1;
};

}  // namespace

std::unique_ptr<Backend> make_gloo_backend(const BackendContext& ctx) { return std::make_unique<GlooBackend>(ctx); }

}  // namespace chorus::rt
