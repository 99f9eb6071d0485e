// Backend "shm": the collectives of the ranks of one host, over our own shared-memory transport
// (transport/shm/shm_transport.h: the segment, steps, rings, lines, cross-memory attach).
// Collectives run in chunk-sized rounds over the ranks' two data slots, separated by steps.
// All-reduce is a reduce-scatter / all-gather over the slots: each rank copies the parts of its
// chunk other ranks need into its slot, reduces its own slice of the chunk from all slots (in
// rank order, so every rank gets bit-identical results), publishes the slice, and copies the
// other slices out: each byte crosses memory about three times, independent of the number of
// ranks. Small all-reduces (and reduces) take one step instead: every rank reduces all slots
// itself, in the same rank order; the smallest ones (up to 448 B) go through the transport's
// lines. Gather, scatter, their v-forms and the all-to-alls run on one exchange engine.
//
// Large broadcasts are single-copy where the kernel allows it (cross-memory attach, as Open
// MPI's and MPICH's shared-memory transports do): the root publishes its buffer's address and
// every other rank reads it straight out of the root's memory with process_vm_readv, instead
// of the root copying it into its slot and the others out of it. CHORUS_SHM_CMA=0 turns it off.
//
// Ranks that disagree on a call fail together instead of corrupting each other: every
// collective's first step carries a signature of the call, which every rank compares with every
// peer's before data moves, and every point-to-point message its size (backends/agreement.h).
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "rt/backends/backends.h"
#include "rt/checking.h"
#include "rt/runtime_config.h"
#include "rt/dtype.h"
#include "rt/errors.h"
#include "rt/transport/shm/shm_transport.h"

namespace chorus::rt {

namespace {

using namespace shm;

// Largest (message bytes x ranks) all-reduced in one step (see one_step_reduce): each rank
// reads every rank's data, so the one-step form wins while that fits in the caches.
constexpr std::size_t kOneStepBytes = 256 << 10;
// Broadcasts of at least this many bytes read the root's buffer directly (when allowed).
constexpr std::size_t kCmaMinBytes = std::size_t{1} << 20;

class ShmBackend final : public Backend {
 public:
  explicit ShmBackend(const BackendContext& ctx) : t_(ctx), rank_(ctx.rank), size_(ctx.size) {
    t_.set_algorithm_namer([this](CollectiveKind op, std::uint16_t a) { return describe_algorithm(*this, op, a); });
  }

  std::string name() const override { return "shm"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // Everything runs on this transport's own code: all_gather through all_gatherv, and gather,
  // scatter, gatherv, scatterv and the all-to-alls through the exchange engine.
  bool native(CollectiveKind) const override { return true; }
  // Sends touch only the head of their ring, receives only the tail of theirs, collectives
  // only the slots: the three may run on different threads.
  bool concurrent_point_to_point() const override { return true; }
  // Every collective compares its peers' signatures at its first step (agreement.h).
  bool agrees_on_data_path() const override { return true; }
  bool takes_avg() const override { return true; }  // so that avg and sum differ in the signatures

  void send(const void* buf, std::size_t bytes, int dst) override {
    t_.begin("send");
    t_.ring_send(buf, bytes, dst);
  }
  void recv(void* buf, std::size_t bytes, int src) override {
    t_.begin("recv");
    t_.ring_recv(buf, bytes, src);
  }
  void send_recv(const void* sbuf, std::size_t sbytes, int dst, void* rbuf, std::size_t rbytes, int src) override {
    t_.begin("send_recv");
    t_.ring_send_recv(sbuf, sbytes, dst, rbuf, rbytes, src);
  }

  // ---- collectives --------------------------------------------------------------------------

  void barrier() override {
    t_.begin("barrier");
    t_.open({.op = CollectiveKind::kBarrier});
  }

  // The operations whose data-path signature is their own (gather, scatter and all_to_all_single
  // open as the exchanges they run on, whose counts are checked pair by pair instead).
  void agree_empty(const Call& c) override {
    switch (c.op) {
      case CollectiveKind::kBroadcast:
      case CollectiveKind::kReduce:
      case CollectiveKind::kAllReduce:
      case CollectiveKind::kReduceScatter:
      case CollectiveKind::kAllGather:
        t_.begin(to_string(c.op).data());
        t_.open({.op = c.op,
                 .dtype = c.dtype,
                 .reduce_op = traits(c.op).reduces ? c.reduce_op : ReduceOp::sum,
                 .root = traits(c.op).rooted ? c.root : -1});
        return;
      default:
        return;
    }
  }

  void broadcast(void* buf, std::size_t count, DType dtype, int root) override {
    t_.begin("broadcast");
    const std::size_t bytes = count * dtype_bytes(dtype);
    const OpSignature sig{.op = CollectiveKind::kBroadcast, .dtype = dtype, .root = root, .bytes = bytes};
    if (t_.cma() && bytes >= kCmaMinBytes) return single_copy_broadcast(static_cast<char*>(buf), bytes, root, sig);
    const std::size_t rounds = (bytes + t_.slot_bytes() - 1) / t_.slot_bytes();
    auto piece = [&](std::size_t k) { return std::min(t_.slot_bytes(), bytes - k * t_.slot_bytes()); };
    char* data = static_cast<char*>(buf);
    if (rank_ == root) std::memcpy(t_.slot(root, t_.side(0)), data, piece(0));
    t_.open(sig);
    for (std::size_t k = 0; k < rounds; ++k) {
      if (rank_ != root) std::memcpy(data + k * t_.slot_bytes(), t_.slot(root, t_.side(k)), piece(k));
      if (rank_ == root && k + 1 < rounds)
        std::memcpy(t_.slot(root, t_.side(k + 1)), data + (k + 1) * t_.slot_bytes(), piece(k + 1));
      if (k + 1 < rounds) t_.step();
    }
    t_.advance(rounds);
  }

  // Every rank publishes its buffer's address and size in its slot. The buffer is cut into size_
  // parts; rank r takes part r from the root with process_vm_writev pushed by the root, and every
  // other part it reads itself with process_vm_readv, so the root and the others all copy about
  // (p - 1) / p of the bytes at once. A closing step keeps every buffer as it is until all the
  // copies are done. Every copy stays inside the other process's published buffer, whatever the
  // signatures said.
  void single_copy_broadcast(char* data, std::size_t bytes, int root, const OpSignature& sig) {
    auto buffer = [&](int r) { return reinterpret_cast<std::uint64_t*>(t_.slot(r, t_.side(0))); };  // address, bytes
    buffer(rank_)[0] = reinterpret_cast<std::uint64_t>(data);
    buffer(rank_)[1] = bytes;
    t_.open(sig);
    const std::size_t n = static_cast<std::size_t>(size_);
    const std::size_t part = (bytes + n - 1) / n;
    auto range = [&](int r) {
      const std::size_t begin = std::min(bytes, static_cast<std::size_t>(r) * part);
      return std::pair{begin, std::min(bytes, begin + part) - begin};
    };
    auto fail = [&](const char* what, int peer) {
      const int error = errno;
      t_.check_alive(peer);  // names a dead peer
      throw CommError(fmt::format("shm broadcast: rank {} cannot {} rank {} (pid {}): {}", rank_, what, peer,
                                  t_.control(peer)->pid, std::strerror(error)));
    };
    auto bound = [&](int peer, std::size_t end) {
      if (end > buffer(peer)[1]) [[unlikely]]
        throw CommError(
            fmt::format("shm broadcast on rank {}: rank {}'s buffer holds {} bytes, the copy would reach byte {}",
                        rank_, peer, buffer(peer)[1], end));
    };
    if (rank_ == root) {
      for (int r = 0; r < size_; ++r) {
        const auto [at, len] = range(r);
        if (r == root || len == 0) continue;
        bound(r, at + len);
        if (!copy_process_memory(t_.control(r)->pid, data + at, buffer(r)[0] + at, len, true)) fail("write into", r);
      }
    } else {
      for (int r = 0; r < size_; ++r) {
        const auto [at, len] = range(r);
        if (r == rank_ || len == 0) continue;
        bound(root, at + len);
        if (!copy_process_memory(t_.control(root)->pid, data + at, buffer(root)[0] + at, len, false))
          fail("read from", root);
      }
    }
    t_.step();
    t_.advance(1);
  }

  void all_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op) override {
    t_.begin("all_reduce");
    reduce_impl(in, out, count, dtype, op, -1);
  }

  void reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root) override {
    t_.begin("reduce");
    reduce_impl(in, out, count, dtype, op, root);
  }

  void reduce_scatter(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op) override {
    t_.begin("reduce_scatter");
    const std::size_t eb = dtype_bytes(dtype);
    const std::size_t region = t_.slot_bytes() / static_cast<std::size_t>(size_) / kLine * kLine;
    const std::size_t chunk = std::max<std::size_t>(region / eb, 1);
    const std::size_t rounds = (count + chunk - 1) / chunk;
    const char* src = static_cast<const char*>(in);
    char* dst = static_cast<char*>(out);
    auto len = [&](std::size_t k) { return std::min(chunk, count - k * chunk); };
    auto write = [&](std::size_t k) {
      for (int j = 0; j < size_; ++j)
        if (j != rank_)
          std::memcpy(t_.slot(rank_, t_.side(k)) + static_cast<std::size_t>(j) * region,
                      src + (static_cast<std::size_t>(j) * count + k * chunk) * eb, len(k) * eb);
    };
    write(0);
    t_.open({.op = CollectiveKind::kReduceScatter, .dtype = dtype, .reduce_op = op, .bytes = count * eb});
    for (std::size_t k = 0; k < rounds; ++k) {
      const std::size_t n = len(k);
      auto source = [&](int p) -> const void* {
        return p == rank_ ? src + (static_cast<std::size_t>(rank_) * count + k * chunk) * eb
                          : t_.slot(p, t_.side(k)) + static_cast<std::size_t>(rank_) * region;
      };
      char* acc = dst + k * chunk * eb;
      reduce_into(dtype, op, acc, source(0), source(1), n);
      for (int p = 2; p < size_; ++p) reduce_into(dtype, op, acc, acc, source(p), n);
      if (k + 1 < rounds) {
        write(k + 1);
        t_.step();
      }
    }
    t_.advance(rounds);
  }

  void all_gather(const void* in, void* out, std::size_t count, DType dtype) override {
    t_.begin("all_gather");
    const std::size_t n = static_cast<std::size_t>(size_);
    Counts counts(n, count), displs(n);
    for (std::size_t j = 0; j < n; ++j) displs[j] = j * count;
    gather_all(in, count, out, counts, displs, dtype,
               {.op = CollectiveKind::kAllGather, .dtype = dtype, .bytes = count * dtype_bytes(dtype)});
  }

  // The runtime's digest exchange (rt/agreement.h), which calls with a named algorithm and
  // compressed calls take here, opens as the call whose digest it carries (`mine` opens with its
  // OpSignature, algorithm included), not as an all-gather of bytes: a peer that makes the same
  // call with shm's own algorithm, on the data path, then fails naming that call and both
  // algorithms, and a peer's lines never pass for its own.
  void agreement_all_gather(const void* mine, void* all, std::size_t bytes) override {
    OpSignature call;
    std::memcpy(&call, mine, sizeof call);
    if (call.vector_form != 0) return all_gather(mine, all, bytes, DType::u8);
    t_.begin(to_string(call.op).data());
    const std::size_t n = static_cast<std::size_t>(size_);
    Counts counts(n, bytes), displs(n);
    for (std::size_t j = 0; j < n; ++j) displs[j] = j * bytes;
    gather_all(mine, bytes, all, counts, displs, DType::u8, call, call.bytes);
  }

  void all_gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                   DType dtype) override {
    t_.begin("all_gatherv");
    gather_all(
        in, count, out, counts, displs, dtype,
        {.op = CollectiveKind::kAllGatherv, .dtype = dtype, .vector_form = 1, .bytes = count * dtype_bytes(dtype)});
  }

  // all_gather(v): every peer must declare the block this rank expects from it (or `declared`,
  // when the signature is another call's: agreement_all_gather).
  void gather_all(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs, DType dtype,
                  const OpSignature& sig, std::optional<std::uint64_t> declared = std::nullopt) {
    const std::size_t eb = dtype_bytes(dtype);
    const std::size_t cap = t_.slot_bytes() / eb;
    std::size_t max_count = 0;
    for (std::size_t c : counts) max_count = std::max(max_count, c);
    const std::size_t rounds = (max_count + cap - 1) / cap;
    const char* src = static_cast<const char*>(in);
    char* dst = static_cast<char*>(out);
    auto piece = [&](std::size_t total, std::size_t k) {
      return total > k * cap ? std::min(cap, total - k * cap) : std::size_t{0};
    };
    char* own = dst + displs[rank_] * eb;
    if (count > 0 && own != src) std::memmove(own, src, count * eb);
    auto write = [&](std::size_t k) {
      if (const std::size_t n = piece(count, k)) std::memcpy(t_.slot(rank_, t_.side(k)), src + k * cap * eb, n * eb);
    };
    write(0);
    t_.open(sig, [&](int p) { return declared ? *declared : counts[p] * eb; });
    for (std::size_t k = 0; k < rounds; ++k) {
      for (int j = 0; j < size_; ++j) {
        if (j == rank_) continue;
        if (const std::size_t n = piece(counts[j], k))
          std::memcpy(dst + (displs[j] + k * cap) * eb, t_.slot(j, t_.side(k)), n * eb);
      }
      if (k + 1 < rounds) {
        write(k + 1);
        t_.step();
      }
    }
    t_.advance(rounds);
  }

  void all_to_allv(const void* in, const Counts& sc, const Counts& sd, void* out, const Counts& rc, const Counts& rd,
                   DType dtype) override {
    t_.begin("all_to_allv");
    const std::size_t eb = dtype_bytes(dtype);
    std::vector<const char*> sp(size_);
    std::vector<char*> dp(size_);
    std::vector<std::size_t> sb(size_), db(size_);
    for (int j = 0; j < size_; ++j) {
      sp[j] = static_cast<const char*>(in) + sd[j] * eb;
      dp[j] = static_cast<char*>(out) + rd[j] * eb;
      sb[j] = sc[j] * eb;
      db[j] = rc[j] * eb;
    }
    exchange(sp, sb, dp, db, {.op = CollectiveKind::kAllToAllv, .dtype = dtype, .vector_form = 1});
  }

  void all_to_all(const std::vector<const void*>& ins, const Counts& in_counts, const std::vector<void*>& outs,
                  const Counts& out_counts, DType dtype) override {
    t_.begin("all_to_all");
    const std::size_t eb = dtype_bytes(dtype);
    std::vector<const char*> sp(size_);
    std::vector<char*> dp(size_);
    std::vector<std::size_t> sb(size_), db(size_);
    for (int j = 0; j < size_; ++j) {
      sp[j] = static_cast<const char*>(ins[j]);
      dp[j] = static_cast<char*>(outs[j]);
      sb[j] = in_counts[j] * eb;
      db[j] = out_counts[j] * eb;
    }
    exchange(sp, sb, dp, db, {.op = CollectiveKind::kAllToAll, .dtype = dtype, .vector_form = 1});
  }

  void gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs, DType dtype,
               int root) override {
    t_.begin("gatherv");
    const std::size_t eb = dtype_bytes(dtype);
    std::vector<const char*> sp(size_, nullptr);
    std::vector<char*> dp(size_, nullptr);
    std::vector<std::size_t> sb(size_, 0), db(size_, 0);
    sp[root] = static_cast<const char*>(in);
    sb[root] = count * eb;
    if (rank_ == root)
      for (int j = 0; j < size_; ++j) {
        dp[j] = static_cast<char*>(out) + displs[j] * eb;
        db[j] = counts[j] * eb;
      }
    exchange(sp, sb, dp, db, {.op = CollectiveKind::kGatherv, .dtype = dtype, .vector_form = 1, .root = root});
  }

  void scatterv(const void* in, const Counts& counts, const Counts& displs, void* out, std::size_t count, DType dtype,
                int root) override {
    t_.begin("scatterv");
    const std::size_t eb = dtype_bytes(dtype);
    std::vector<const char*> sp(size_, nullptr);
    std::vector<char*> dp(size_, nullptr);
    std::vector<std::size_t> sb(size_, 0), db(size_, 0);
    dp[root] = static_cast<char*>(out);
    db[root] = count * eb;
    if (rank_ == root)
      for (int j = 0; j < size_; ++j) {
        sp[j] = static_cast<const char*>(in) + displs[j] * eb;
        sb[j] = counts[j] * eb;
      }
    exchange(sp, sb, dp, db, {.op = CollectiveKind::kScatterv, .dtype = dtype, .vector_form = 1, .root = root});
  }

 private:
  // ---- algorithms ---------------------------------------------------------------------------

  // All-reduce (root < 0) or reduce to root over the slots; see the file comment.
  void reduce_impl(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root) {
    const std::size_t eb = dtype_bytes(dtype);
    const OpSignature sig{.op = root < 0 ? CollectiveKind::kAllReduce : CollectiveKind::kReduce,
                          .dtype = dtype,
                          .reduce_op = op,
                          .root = root,
                          .bytes = count * eb};
    if (count * eb <= t_.slot_bytes() && count * eb * static_cast<std::size_t>(size_) <= one_step_bytes_) {
      one_step_reduce(in, out, count, dtype, op, root, sig);
      return;
    }
    const std::size_t chunk = t_.slot_bytes() / eb;
    const std::size_t rounds = (count + chunk - 1) / chunk;
    const std::size_t align = std::max<std::size_t>(kLine / eb, 1);
    const char* src = static_cast<const char*>(in);
    char* dst = static_cast<char*>(out);
    const std::size_t n = static_cast<std::size_t>(size_);
    auto len = [&](std::size_t k) { return std::min(chunk, count - k * chunk); };
    // Slice j of a chunk of `l` elements: [bound(j), bound(j + 1)).
    auto bound = [&](std::size_t l, std::size_t j) { return j >= n ? l : std::min(l, (l * j / n) / align * align); };
    auto write = [&](std::size_t k) {
      const std::size_t l = len(k);
      for (std::size_t j = 0; j < n; ++j) {
        if (static_cast<int>(j) == rank_) continue;
        const std::size_t b0 = bound(l, j), b1 = bound(l, j + 1);
        if (b1 > b0) std::memcpy(t_.slot(rank_, t_.side(k)) + b0 * eb, src + (k * chunk + b0) * eb, (b1 - b0) * eb);
      }
    };
    const bool copy_out = root < 0 || root == rank_;
    write(0);
    t_.open(sig);
    for (std::size_t k = 0; k < rounds; ++k) {
      const std::size_t l = len(k), me = static_cast<std::size_t>(rank_);
      const std::size_t b0 = bound(l, me), b1 = bound(l, me + 1), m = b1 - b0;
      if (m > 0) {
        auto source = [&](int p) -> const void* {
          return p == rank_ ? src + (k * chunk + b0) * eb : t_.slot(p, t_.side(k)) + b0 * eb;
        };
        char* acc = t_.slot(rank_, t_.side(k)) + b0 * eb;  // free: nobody reads our own slice yet
        reduce_into(dtype, op, acc, source(0), source(1), m);
        for (int p = 2; p < size_; ++p) reduce_into(dtype, op, acc, acc, source(p), m);
      }
      t_.step();
      if (copy_out) {
        for (std::size_t j = 0; j < n; ++j) {
          const std::size_t c0 = bound(l, j), c1 = bound(l, j + 1);
          if (c1 > c0)
            std::memcpy(dst + (k * chunk + c0) * eb, t_.slot(static_cast<int>(j), t_.side(k)) + c0 * eb,
                        (c1 - c0) * eb);
        }
      }
      if (k + 1 < rounds) {
        write(k + 1);
        t_.step();
      }
    }
    t_.advance(rounds);
  }

  // Small all-reduce / reduce in one step: every rank copies its input into its slot; after
  // the step every rank that wants the result reduces all slots itself, in rank order
  // (((s0 + s1) + s2) + ...: the order of the chunked algorithm, so results are bit-identical
  // across ranks and sizes). One step instead of two per round, and no copy-out of slices.
  void one_step_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root,
                       const OpSignature& sig) {
    const std::size_t bytes = count * dtype_bytes(dtype);
    const std::size_t b = t_.side(0);
    if (bytes <= kSmallLines * kLineData && size_ > 1) {
      t_.lines_reduce(in, out, bytes, dtype, op, root, sig);
      return;
    }
    if (bytes > 0) std::memcpy(t_.slot(rank_, b), in, bytes);
    t_.open(sig);
    if ((root < 0 || root == rank_) && count > 0) {
      reduce_into(dtype, op, out, t_.slot(0, b), t_.slot(1, b), count);
      for (int p = 2; p < size_; ++p) reduce_into(dtype, op, out, out, t_.slot(p, b), count);
    }
    t_.advance(1);
  }

  // CHORUS_SHM_ONE_STEP_BYTES: 0 (never one step) to 1 GiB.
  static std::size_t one_step_limit() {
    return env_bytes("CHORUS_SHM_ONE_STEP_BYTES", kOneStepBytes, 0, std::size_t{1} << 30);
  }

  // Generic exchange: sp[j]/sb[j] is what this rank sends to j, dp[p]/db[p] where what comes
  // from p goes. A header step (the collective's opening) shares every rank's byte counts, which
  // are checked for agreement pair by pair (the signature leaves them out) and give the number
  // of rounds.
  void exchange(const std::vector<const char*>& sp, const std::vector<std::size_t>& sb, const std::vector<char*>& dp,
                const std::vector<std::size_t>& db, const OpSignature& sig) {
    const std::size_t n = static_cast<std::size_t>(size_);
    const std::size_t parity = t_.next_exchange_parity();
    std::uint64_t* mine = t_.header(rank_, parity);
    for (std::size_t j = 0; j < n; ++j) {
      mine[j] = sb[j];
      mine[n + j] = db[j];
    }
    t_.open(sig);
    const std::size_t region = t_.slot_bytes() / n / kLine * kLine;
    std::size_t rounds = 0;
    for (int p = 0; p < size_; ++p) {
      const std::uint64_t* row = t_.header(p, parity);
      for (int q = 0; q < size_; ++q) {
        const std::uint64_t sent = row[q];
        const std::uint64_t expected = t_.header(q, parity)[n + static_cast<std::size_t>(p)];
        if (sent != expected)
          throw InputError(fmt::format("{} on shm, rank {}", t_.op(), rank_),
                           fmt::format("rank {} sends {} bytes to rank {}, but rank {} expects {} "
                                       "bytes from rank {}",
                                       p, sent, q, q, expected, p));
        if (p != q) rounds = std::max<std::size_t>(rounds, (sent + region - 1) / region);
      }
    }
    if (sb[rank_] > 0 && dp[rank_] != sp[rank_]) std::memmove(dp[rank_], sp[rank_], sb[rank_]);
    auto piece = [&](std::size_t total, std::size_t k) {
      return total > k * region ? std::min(region, total - k * region) : std::size_t{0};
    };
    auto write = [&](std::size_t k) {
      for (int j = 0; j < size_; ++j)
        if (j != rank_)
          if (const std::size_t m = piece(sb[j], k))
            std::memcpy(t_.slot(rank_, t_.side(k)) + static_cast<std::size_t>(j) * region, sp[j] + k * region, m);
    };
    if (rounds == 0) return;
    write(0);
    t_.step();
    for (std::size_t k = 0; k < rounds; ++k) {
      for (int p = 0; p < size_; ++p)
        if (p != rank_)
          if (const std::size_t m = piece(db[p], k))
            std::memcpy(dp[p] + k * region, t_.slot(p, t_.side(k)) + static_cast<std::size_t>(rank_) * region, m);
      if (k + 1 < rounds) {
        write(k + 1);
        t_.step();
      }
    }
    t_.advance(rounds);
  }

  ShmTransport t_;
  int rank_;
  int size_;
  // All-reduce / reduce of at most this many bytes (times the world size) in one step.
  std::size_t one_step_bytes_ = one_step_limit();
};

}  // namespace

std::unique_ptr<Backend> make_shm_backend(const BackendContext& ctx) { return std::make_unique<ShmBackend>(ctx); }

}  // namespace chorus::rt
