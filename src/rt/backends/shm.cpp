// Backend "shm": our own transport for the ranks of one host, over one shared-memory segment
// (anonymous memory whose descriptor rank 0 passes to the others: transport/shm/). Each rank owns two data slots (double buffering); collectives run in chunk-sized
// rounds separated by "steps" (every rank bumps its step counter and waits for all others to
// reach it). All-reduce is a reduce-scatter / all-gather over the slots: each rank copies the
// parts of its chunk other ranks need into its slot, reduces its own slice of the chunk from
// all slots (in rank order, so every rank gets bit-identical results), publishes the slice,
// and copies the other slices out — each byte crosses memory about three times, independent
// of the number of ranks. Small all-reduces (and reduces) take one step instead: every rank
// reduces all slots itself, in the same rank order; the smallest ones (up to 448 B) go through
// "lines" instead of slots, each cache line carrying its data and the collective's tag, so a
// reader pays one cache miss per line rather than one for the step counter and one for the data
// (the idea of NCCL's LL128 protocol). No collective ends with a step of its
// own: the next one starts on the other slot, and its first step protects the last reads
// (see phase_). Point-to-point goes through one ring buffer per ordered pair.
//
// Large broadcasts are single-copy where the kernel allows it (cross-memory attach, as Open
// MPI's and MPICH's shared-memory transports do): the root publishes its buffer's address and
// every other rank reads it straight out of the root's memory with process_vm_readv, instead
// of the root copying it into its slot and the others out of it. Whether the ranks may read
// each other's memory (same user; ptrace rules; a container's seccomp profile) is probed at init
// and agreed on by all ranks; CHORUS_SHM_CMA=0 turns it off.
//
// Ranks that disagree on a call fail together instead of corrupting each other: every
// collective's first step carries a signature of the call, which every rank compares with every
// peer's before data moves, and every point-to-point message its size (shm_agreement.h).
//
// Waiting spins briefly, then yields, then sleeps on a futex, so ranks may outnumber cores.
// Every wait checks the operation deadline and whether the awaited peer is still alive.
#include <sched.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include <fmt/format.h>

#include "core/error.h"
#include "rt/backends/backends.h"
#include "rt/backends/agreement.h"
#include "rt/dtype.h"
#include "rt/errors.h"
#include "rt/transport/shm/fd_passing.h"
#include "rt/transport/shm/futex.h"
#include "rt/transport/shm/segment.h"

namespace chorus::rt {

namespace {

constexpr std::uint64_t kMagic = 0x63686f7275737368ULL;  // "chorussh"
constexpr std::size_t kPage = 4096;
constexpr std::size_t kLine = 64;
// Largest (message bytes x ranks) all-reduced in one step (see one_step_reduce): each rank
// reads every rank's data, so the one-step form wins while that fits in the caches.
constexpr std::size_t kOneStepBytes = 256 << 10;

std::size_t round_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

constexpr int kMaxWorld = 4096;
constexpr std::size_t kMaxSlotBytes = std::size_t{1} << 30;

// CHORUS_SHM_SLOT_BYTES: a whole decimal byte count in [4096, 1 GiB], rounded up to pages.
std::size_t env_slot_bytes(std::size_t fallback) {
  const char* v = std::getenv("CHORUS_SHM_SLOT_BYTES");
  if (v == nullptr) return fallback;
  const std::string text = v;
  std::size_t used = 0;
  unsigned long long x = 0;
  try {
    x = std::stoull(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || text[0] == '-' || x < kPage || x > kMaxSlotBytes)
    throw InputError("environment CHORUS_SHM_SLOT_BYTES",
                     fmt::format("'{}' is not a byte count in [4096, {}]", text, kMaxSlotBytes));
  return round_up(static_cast<std::size_t>(x), kPage);
}

// a * b + c, or InputError if it does not fit in size_t.
std::size_t checked(std::size_t a, std::size_t b, std::size_t c, const char* what) {
  std::size_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r))
    throw InputError("init shm", fmt::format("the segment size overflows ({})", what));
  return r;
}

// Tells the other ranks why rank 0 failed (they wait for the segment's contact in the store),
// then rethrows.
[[noreturn]] void publish_failure(Store& store, const std::string& key) {
  try {
    throw;
  } catch (const InputError& e) {
    store.set_string(key, std::string("!input ") + e.what());
    throw;
  } catch (const std::exception& e) {
    store.set_string(key, std::string("!comm ") + e.what());
    throw;
  }
}

struct alignas(kPage) SegmentHeader {
  std::uint64_t magic;
  std::uint32_t world_size;
  std::uint64_t slot_bytes;
  std::uint64_t ring_bytes;
};

// One cache line of a small all-reduce: the data, and the tag of the collective that wrote it,
// stored (release) after the data and the collective's compact signature (shm_agreement.h).
// Line 0 of a side also carries the tag and signature of every other collective opened on that
// side, so that a rank in a small all-reduce learns that a peer called something else.
constexpr std::size_t kLineData = 56;  // a multiple of every element size
constexpr std::size_t kSmallLines = 8;  // per rank and slot side: up to 448 B go through lines
struct alignas(64) SmallLine {
  std::atomic<std::uint32_t> tag{0};
  std::uint32_t signature = 0;
  alignas(8) char data[kLineData];
};

struct alignas(128) RankControl {
  SharedCounter step;  // steps this rank has completed
  // The signature of the collective each step opened, by the step's parity: in the step's cache
  // line, so a peer that sees the step has the signature too.
  OpSignature opened[2];
  alignas(64) std::int32_t pid;
  // Cross-memory attach (see the top): where this process keeps kCmaProbe, for the others to
  // read at init, and whether this rank could read every other rank's.
  std::atomic<std::uint64_t> probe_address{0};
  std::atomic<std::uint32_t> can_read_peers{0};
  SmallLine lines[2][kSmallLines];  // one set per slot side (see side())
};

// Each message is an 8-byte header (its byte count) and its bytes.
struct alignas(128) RingControl {
  SharedCounter head;  // bytes written by the sender (wraps at 2^32)
  alignas(128) SharedCounter tail;  // bytes consumed by the receiver
  // Set by a receiver whose buffer did not match a message's size, for the sender (which reads
  // the tail's line anyway): the two sizes, then the flag (release).
  std::uint64_t refused_buffer = 0, refused_message = 0;
  std::atomic<std::uint32_t> refused{0};
};
static_assert(sizeof(RankControl) == 1152 && sizeof(RingControl) == 256, "the segment layout of docs/runtime.md");

inline void cpu_relax() { __builtin_ia32_pause(); }

// What every process holds at a different address (ASLR), for the cross-memory-attach probe.
const std::uint64_t kCmaProbe = kMagic ^ 0x636d61ULL;
// Broadcasts of at least this many bytes read the root's buffer directly (when allowed).
constexpr std::size_t kCmaMinBytes = std::size_t{1} << 20;

// Copies `bytes` between `local` and `remote` in process `pid` (`write`: into it, else out of
// it); false (errno set) if the kernel refuses.
bool copy_process_memory(int pid, void* local, std::uint64_t remote, std::size_t bytes, bool write) {
  std::size_t done = 0;
  while (done < bytes) {
    iovec here{static_cast<char*>(local) + done, bytes - done};
    iovec there{reinterpret_cast<void*>(remote + done), bytes - done};
    const ssize_t n = write ? ::process_vm_writev(pid, &here, 1, &there, 1, 0) : ::process_vm_readv(pid, &here, 1, &there, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EFAULT;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// CHORUS_SHM_CMA: "0" turns single-copy broadcasts off, "1" (the default) lets the probe decide.
bool env_cma_wanted() {
  const char* v = std::getenv("CHORUS_SHM_CMA");
  if (v == nullptr || *v == '\0' || std::string_view(v) == "1") return true;
  if (std::string_view(v) == "0") return false;
  throw InputError("environment CHORUS_SHM_CMA", fmt::format("'{}' is neither 0 nor 1", v));
}

// What the calling thread is doing (collectives, sends and receives run on separate threads).
thread_local const char* op_ = "";
thread_local std::chrono::steady_clock::time_point deadline_, last_check_;

class ShmBackend final : public Backend {
 public:
  explicit ShmBackend(const BackendContext& ctx)
      : rank_(ctx.rank), size_(ctx.size), timeout_(ctx.timeout), failure_of_(ctx.failure_of) {
    if (!ctx.single_host)
      throw InputError("init shm", "backend 'shm' needs every rank on one host; use mpi or gloo");
    if (size_ < 1 || size_ > kMaxWorld)
      throw InputError("init shm", fmt::format("world size {} is outside 1..{}", size_, kMaxWorld));
    const std::size_t n = static_cast<std::size_t>(size_);
    // Every slot is cut into one region per rank (all-reduce, all-to-all): at least a cache
    // line each, so no region is empty however many ranks there are.
    slot_bytes_ = env_slot_bytes(round_up(std::max<std::size_t>(1 << 20, n * kLine), kPage));
    if (slot_bytes_ / n / kLine == 0)
      throw InputError("environment CHORUS_SHM_SLOT_BYTES",
                       fmt::format("{} bytes leave less than {} bytes per rank with {} ranks; use at least {}",
                                   slot_bytes_, kLine, size_, round_up(n * kLine, kPage)));
    ring_bytes_ = std::bit_floor(std::clamp<std::size_t>((16u << 20) / (n * n), 16 << 10, 256 << 10));
    header_bytes_ = round_up(2 * 2 * n * sizeof(std::uint64_t), kPage);
    control_off_ = sizeof(SegmentHeader);
    headers_off_ = round_up(control_off_ + n * sizeof(RankControl), kPage);
    slots_off_ = checked(n, header_bytes_, headers_off_, "headers");
    rings_off_ = checked(n * 2, slot_bytes_, slots_off_, "slots");
    const std::size_t ring_stride = sizeof(RingControl) + ring_bytes_;
    const std::size_t total = checked(checked(n, n, 0, "rings"), ring_stride, rings_off_, "rings");
    const std::string key = ctx.key_prefix + "/segment";
    const auto wait = std::chrono::milliseconds(timeout_);
    const auto deadline = std::chrono::steady_clock::now() + wait;
    // Rank 0 creates anonymous memory and hands its descriptor to the others over a Unix socket
    // (transport/shm/fd_passing.h): the segment has no name, and disappears with the last process
    // that maps it, however the job ends.
    if (rank_ == 0) {
      std::unique_ptr<FdServer> server;
      try {
        seg_ = ShmSegment::create(total, fmt::format("{} ranks (CHORUS_SHM_SLOT_BYTES={})", size_, slot_bytes_));
        if (size_ > 1) server = std::make_unique<FdServer>();
      } catch (...) {
        if (size_ > 1) publish_failure(*ctx.store, key);
        throw;
      }
      new (seg_.data()) SegmentHeader{kMagic, static_cast<std::uint32_t>(size_), slot_bytes_, ring_bytes_};
      for (std::size_t i = 0; i < n; ++i) new (control(static_cast<int>(i))) RankControl();
      for (std::size_t i = 0; i < n * n; ++i) new (seg_.data() + rings_off_ + i * ring_stride) RingControl();
      if (server) {
        ctx.store->set_string(key, server->contact());
        server->serve(seg_.fd(), size_ - 1, deadline);
      }
    } else {
      const std::string contact = ctx.store->get_string(key, wait);
      if (contact.rfind("!input ", 0) == 0) throw InputError("rank 0", contact.substr(7));
      if (contact.rfind("!comm ", 0) == 0) throw CommError("shm: rank 0 failed: " + contact.substr(6));
      seg_ = ShmSegment::adopt(receive_fd(contact, deadline), total);
      const auto* h = reinterpret_cast<const SegmentHeader*>(seg_.data());
      if (h->magic != kMagic || h->world_size != static_cast<std::uint32_t>(size_) ||
          h->slot_bytes != slot_bytes_ || h->ring_bytes != ring_bytes_)
        throw CommError("shm: segment layout differs between ranks (set CHORUS_SHM_SLOT_BYTES "
                        "the same on every rank)");
    }
    seg_.release_fd();
    control(rank_)->pid = static_cast<std::int32_t>(::getpid());
    control(rank_)->probe_address.store(reinterpret_cast<std::uint64_t>(&kCmaProbe), std::memory_order_release);
    const bool cma_wanted = env_cma_wanted();
    ctx.store->barrier(ctx.key_prefix + "/mapped", size_, wait);
    ring_stride_ = ring_stride;
    if (size_ > 1) {  // every rank probes every other, then all read the same verdicts
      bool can = cma_wanted;
      for (int p = 0; p < size_ && can; ++p) {
        std::uint64_t got = 0;
        can = p == rank_ || (copy_process_memory(control(p)->pid, &got, control(p)->probe_address.load(std::memory_order_acquire),
                                                 sizeof got, false) &&
                             got == kCmaProbe);
      }
      control(rank_)->can_read_peers.store(can ? 1 : 0, std::memory_order_release);
      ctx.store->barrier(ctx.key_prefix + "/cma", size_, wait);
      cma_ = true;
      for (int p = 0; p < size_; ++p) cma_ = cma_ && control(p)->can_read_peers.load(std::memory_order_acquire) == 1;
    }
  }

  std::string name() const override { return "shm"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // Everything runs on this transport's own code: all_gather through all_gatherv, and gather,
  // scatter, gatherv, scatterv and the all-to-alls through the exchange engine.
  bool native(OpKind) const override { return true; }
  // Sends touch only the head of their ring, receives only the tail of theirs, collectives
  // only the slots: the three may run on different threads.
  bool concurrent_point_to_point() const override { return true; }
  // Every collective compares its peers' signatures at its first step (agreement.h).
  bool agrees_on_data_path() const override { return true; }
  bool takes_avg() const override { return true; }  // so that avg and sum differ in the signatures

  // ---- point to point -----------------------------------------------------------------------

  void send(const void* buf, std::size_t bytes, int dst) override {
    begin("send");
    Outgoing m{static_cast<const char*>(buf), bytes};
    RingControl* r = ring(rank_, dst);
    while (!m.finished()) {
      std::uint32_t seen = 0;
      if (!push(m, dst, &seen))
        wait_until([&] { return r->tail.value.load(std::memory_order_acquire) != seen || r->refused.load(std::memory_order_acquire) != 0; },
                   r->tail, dst);
    }
  }

  void recv(void* buf, std::size_t bytes, int src) override {
    begin("recv");
    Incoming m{static_cast<char*>(buf), bytes};
    while (!m.finished()) {
      std::uint32_t seen = 0;
      if (!pull(m, src, &seen)) wait_change(ring(src, rank_)->head, seen, src);
    }
  }

  void send_recv(const void* sbuf, std::size_t sbytes, int dst, void* rbuf, std::size_t rbytes,
                 int src) override {
    begin("send_recv");
    Outgoing out{static_cast<const char*>(sbuf), sbytes};
    Incoming in{static_cast<char*>(rbuf), rbytes};
    int idle = 0;
    while (!out.finished() || !in.finished()) {
      bool progress = false;
      if (!out.finished()) progress |= push(out, dst);
      if (!in.finished()) progress |= pull(in, src);
      if (progress) {
        idle = 0;
      } else if (++idle > 64) {
        sched_yield();
        if (idle > 256) {
          check_alive(!out.finished() ? dst : src);
          ::usleep(20);
        }
      } else {
        cpu_relax();
      }
    }
  }

  // ---- collectives --------------------------------------------------------------------------

  void barrier() override {
    begin("barrier");
    open({.op = OpKind::barrier});
  }

  void broadcast(void* buf, std::size_t count, DType dtype, int root) override {
    begin("broadcast");
    const std::size_t bytes = count * dtype_bytes(dtype);
    const OpSignature sig{.op = OpKind::broadcast, .dtype = dtype, .root = root, .bytes = bytes};
    if (cma_ && bytes >= kCmaMinBytes) return single_copy_broadcast(static_cast<char*>(buf), bytes, root, sig);
    const std::size_t rounds = (bytes + slot_bytes_ - 1) / slot_bytes_;
    auto piece = [&](std::size_t k) { return std::min(slot_bytes_, bytes - k * slot_bytes_); };
    char* data = static_cast<char*>(buf);
    if (rank_ == root) std::memcpy(slot(root, side(0)), data, piece(0));
    open(sig);
    for (std::size_t k = 0; k < rounds; ++k) {
      if (rank_ != root) std::memcpy(data + k * slot_bytes_, slot(root, side(k)), piece(k));
      if (rank_ == root && k + 1 < rounds)
        std::memcpy(slot(root, side(k + 1)), data + (k + 1) * slot_bytes_, piece(k + 1));
      if (k + 1 < rounds) step();
    }
    advance(rounds);
  }

  // Every rank publishes its buffer's address and size in its slot. The buffer is cut into size_
  // parts; rank r takes part r from the root with process_vm_writev pushed by the root, and every
  // other part it reads itself with process_vm_readv, so the root and the others all copy about
  // (p - 1) / p of the bytes at once. A closing step keeps every buffer as it is until all the
  // copies are done. Every copy stays inside the other process's published buffer, whatever the
  // signatures said.
  void single_copy_broadcast(char* data, std::size_t bytes, int root, const OpSignature& sig) {
    auto buffer = [&](int r) { return reinterpret_cast<std::uint64_t*>(slot(r, side(0))); };  // address, bytes
    buffer(rank_)[0] = reinterpret_cast<std::uint64_t>(data);
    buffer(rank_)[1] = bytes;
    open(sig);
    const std::size_t n = static_cast<std::size_t>(size_);
    const std::size_t part = (bytes + n - 1) / n;
    auto range = [&](int r) {
      const std::size_t begin = std::min(bytes, static_cast<std::size_t>(r) * part);
      return std::pair{begin, std::min(bytes, begin + part) - begin};
    };
    auto fail = [&](const char* what, int peer) {
      const int error = errno;
      check_alive(peer);  // names a dead peer
      throw CommError(fmt::format("shm broadcast: rank {} cannot {} rank {} (pid {}): {}", rank_, what, peer,
                                  control(peer)->pid, std::strerror(error)));
    };
    auto bound = [&](int peer, std::size_t end) {
      if (end > buffer(peer)[1]) [[unlikely]]
        throw CommError(fmt::format("shm broadcast on rank {}: rank {}'s buffer holds {} bytes, the copy would reach byte {}",
                                    rank_, peer, buffer(peer)[1], end));
    };
    if (rank_ == root) {
      for (int r = 0; r < size_; ++r) {
        const auto [at, len] = range(r);
        if (r == root || len == 0) continue;
        bound(r, at + len);
        if (!copy_process_memory(control(r)->pid, data + at, buffer(r)[0] + at, len, true)) fail("write into", r);
      }
    } else {
      for (int r = 0; r < size_; ++r) {
        const auto [at, len] = range(r);
        if (r == rank_ || len == 0) continue;
        bound(root, at + len);
        if (!copy_process_memory(control(root)->pid, data + at, buffer(root)[0] + at, len, false)) fail("read from", root);
      }
    }
    step();
    advance(1);
  }

  void all_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op) override {
    begin("all_reduce");
    reduce_impl(in, out, count, dtype, op, -1);
  }

  void reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
              int root) override {
    begin("reduce");
    reduce_impl(in, out, count, dtype, op, root);
  }

  void reduce_scatter(const void* in, void* out, std::size_t count, DType dtype,
                      ReduceOp op) override {
    begin("reduce_scatter");
    const std::size_t eb = dtype_bytes(dtype);
    const std::size_t region = slot_bytes_ / static_cast<std::size_t>(size_) / kLine * kLine;
    const std::size_t chunk = std::max<std::size_t>(region / eb, 1);
    const std::size_t rounds = (count + chunk - 1) / chunk;
    const char* src = static_cast<const char*>(in);
    char* dst = static_cast<char*>(out);
    auto len = [&](std::size_t k) { return std::min(chunk, count - k * chunk); };
    auto write = [&](std::size_t k) {
      for (int j = 0; j < size_; ++j)
        if (j != rank_)
          std::memcpy(slot(rank_, side(k)) + static_cast<std::size_t>(j) * region,
                      src + (static_cast<std::size_t>(j) * count + k * chunk) * eb, len(k) * eb);
    };
    write(0);
    open({.op = OpKind::reduce_scatter, .dtype = dtype, .reduce_op = op, .bytes = count * eb});
    for (std::size_t k = 0; k < rounds; ++k) {
      const std::size_t n = len(k);
      auto source = [&](int p) -> const void* {
        return p == rank_ ? src + (static_cast<std::size_t>(rank_) * count + k * chunk) * eb
                          : slot(p, side(k)) + static_cast<std::size_t>(rank_) * region;
      };
      char* acc = dst + k * chunk * eb;
      reduce_into(dtype, op, acc, source(0), source(1), n);
      for (int p = 2; p < size_; ++p) reduce_into(dtype, op, acc, acc, source(p), n);
      if (k + 1 < rounds) {
        write(k + 1);
        step();
      }
    }
    advance(rounds);
  }

  void all_gather(const void* in, void* out, std::size_t count, DType dtype) override {
    begin("all_gather");
    const std::size_t n = static_cast<std::size_t>(size_);
    Counts counts(n, count), displs(n);
    for (std::size_t j = 0; j < n; ++j) displs[j] = j * count;
    gather_all(in, count, out, counts, displs, dtype, {.op = OpKind::all_gather, .dtype = dtype, .bytes = count * dtype_bytes(dtype)});
  }

  void all_gatherv(const void* in, std::size_t count, void* out, const Counts& counts,
                   const Counts& displs, DType dtype) override {
    begin("all_gatherv");
    gather_all(in, count, out, counts, displs, dtype,
               {.op = OpKind::all_gatherv, .dtype = dtype, .vector_form = 1, .bytes = count * dtype_bytes(dtype)});
  }

  // all_gather(v): every peer must declare the block this rank expects from it.
  void gather_all(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                  DType dtype, const OpSignature& sig) {
    const std::size_t eb = dtype_bytes(dtype);
    const std::size_t cap = slot_bytes_ / eb;
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
      if (const std::size_t n = piece(count, k)) std::memcpy(slot(rank_, side(k)), src + k * cap * eb, n * eb);
    };
    write(0);
    open(sig, [&](int p) { return counts[p] * eb; });
    for (std::size_t k = 0; k < rounds; ++k) {
      for (int j = 0; j < size_; ++j) {
        if (j == rank_) continue;
        if (const std::size_t n = piece(counts[j], k))
          std::memcpy(dst + (displs[j] + k * cap) * eb, slot(j, side(k)), n * eb);
      }
      if (k + 1 < rounds) {
        write(k + 1);
        step();
      }
    }
    advance(rounds);
  }

  void all_to_allv(const void* in, const Counts& sc, const Counts& sd, void* out, const Counts& rc,
                   const Counts& rd, DType dtype) override {
    begin("all_to_allv");
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
    exchange(sp, sb, dp, db, {.op = OpKind::all_to_allv, .dtype = dtype, .vector_form = 1});
  }

  void all_to_all(const std::vector<const void*>& ins, const Counts& in_counts,
                  const std::vector<void*>& outs, const Counts& out_counts, DType dtype) override {
    begin("all_to_all");
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
    exchange(sp, sb, dp, db, {.op = OpKind::all_to_all, .dtype = dtype, .vector_form = 1});
  }

  void gatherv(const void* in, std::size_t count, void* out, const Counts& counts,
               const Counts& displs, DType dtype, int root) override {
    begin("gatherv");
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
    exchange(sp, sb, dp, db, {.op = OpKind::gatherv, .dtype = dtype, .vector_form = 1, .root = root});
  }

  void scatterv(const void* in, const Counts& counts, const Counts& displs, void* out,
                std::size_t count, DType dtype, int root) override {
    begin("scatterv");
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
    exchange(sp, sb, dp, db, {.op = OpKind::scatterv, .dtype = dtype, .vector_form = 1, .root = root});
  }

 private:
  // ---- layout -------------------------------------------------------------------------------

  RankControl* control(int r) const {
    return reinterpret_cast<RankControl*>(seg_.data() + control_off_) + r;
  }
  // Which of a rank's two slots round k of the current collective uses (see phase_).
  std::size_t side(std::size_t k) const { return (phase_ + k) & 1; }
  // Ends a collective of `rounds` rounds without a closing step: its last slot may still be
  // read by slower ranks, so the next collective starts on the other one.
  void advance(std::size_t rounds) { phase_ = (phase_ + rounds) & 1; }
  char* slot(int r, std::size_t buffer) const {
    return seg_.data() + slots_off_ + (static_cast<std::size_t>(r) * 2 + buffer) * slot_bytes_;
  }
  std::uint64_t* header(int r, std::size_t parity) const {
    return reinterpret_cast<std::uint64_t*>(seg_.data() + headers_off_ +
                                            static_cast<std::size_t>(r) * header_bytes_ +
                                            parity * header_bytes_ / 2);
  }
  RingControl* ring(int from, int to) const {
    return reinterpret_cast<RingControl*>(
        seg_.data() + rings_off_ +
        (static_cast<std::size_t>(from) * static_cast<std::size_t>(size_) + static_cast<std::size_t>(to)) *
            ring_stride_);
  }
  char* ring_data(RingControl* r) const { return reinterpret_cast<char*>(r) + sizeof(RingControl); }

  // ---- waiting ------------------------------------------------------------------------------

  // The operation's clock starts at its first slow wait (check_alive), not here: a small
  // collective that never leaves the spin phase of wait_until reads no clock at all (two clock
  // reads were a quarter of an 8 B all-reduce). The spin phase is a few microseconds, so the
  // deadline moves by that much.
  void begin(const char* what) {
    op_ = what;
    deadline_ = {};
  }

  void check_alive(int peer) {
    const auto now = std::chrono::steady_clock::now();
    if (deadline_ == std::chrono::steady_clock::time_point{}) {
      deadline_ = now + timeout_;
      last_check_ = now;
    }
    if (now > deadline_)
      throw TimeoutError(fmt::format("shm {}: rank {} timed out waiting for rank {} after {} ms "
                                     "(the peer is stuck or the ranks disagree on the call)",
                                     op_, rank_, peer, timeout_.count()));
    if (now - last_check_ < std::chrono::milliseconds(50)) return;
    last_check_ = now;
    // Name every dead rank: after the first death, other ranks exit on their error too, and
    // a rank that checks late must still name the first one.
    std::string dead;
    for (int p = 0; p < size_; ++p)
      if (p != rank_ && process_dead(control(p)->pid))
        dead += fmt::format("{}{}", dead.empty() ? "" : ", ", gone_peer(failure_of_, p, control(p)->pid));
    if (!dead.empty())
      throw CommError(fmt::format("shm {}: {}; rank {} cannot complete the operation", op_, dead, rank_));
  }

  // Sleeps until `done()` holds; `word` is the counter whose change may make it hold.
  template <typename Done>
  void wait_until(Done done, SharedCounter& word, int peer) {
    for (int i = 0;; ++i) {
      if (done()) return;
      if (i < 100) {
        cpu_relax();
        continue;
      }
      if (i < 140) {
        sched_yield();
        continue;
      }
      check_alive(peer);
      const std::uint32_t seen = word.value.load(std::memory_order_seq_cst);
      word.sleepers.fetch_add(1, std::memory_order_seq_cst);
      if (!done()) futex_wait(&word.value, seen, 2000);
      word.sleepers.fetch_sub(1, std::memory_order_seq_cst);
    }
  }

  // Completes one step: publish ours, wait until every rank has completed it.
  void step() {
    ++steps_;
    control(rank_)->step.store_and_wake(steps_);
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) continue;
      SharedCounter& c = control(p)->step;
      wait_until([&] { return static_cast<std::int32_t>(c.value.load(std::memory_order_acquire) - steps_) >= 0; },
                 c, p);
    }
  }

  // Waits until the counter differs from `seen`, the value the failed push / pull looked at
  // (not a value loaded now: the peer may have moved it in between, for the last time).
  void wait_change(SharedCounter& word, std::uint32_t seen, int peer) {
    wait_until([&] { return word.value.load(std::memory_order_acquire) != seen; }, word, peer);
  }

  // A message on a ring: its 8-byte header (the byte count), then its bytes; `done` counts both.
  struct Outgoing {
    const char* data;
    std::size_t bytes;
    std::uint64_t header = bytes;
    std::size_t done = 0;
    bool finished() const { return done == sizeof header + bytes; }
  };
  struct Incoming {
    char* data;
    std::size_t bytes;
    std::uint64_t header = 0;
    std::size_t done = 0;
    bool finished() const { return done == sizeof header + bytes; }
  };

  // Copies n bytes to / from ring offset `at` (a counter value), wrapping at the end.
  void to_ring(RingControl* r, std::uint32_t at, const void* src, std::size_t n) const {
    const std::size_t off = at & (ring_bytes_ - 1), first = std::min(n, ring_bytes_ - off);
    std::memcpy(ring_data(r) + off, src, first);
    std::memcpy(ring_data(r), static_cast<const char*>(src) + first, n - first);
  }
  void from_ring(RingControl* r, std::uint32_t at, void* dst, std::size_t n) const {
    const std::size_t off = at & (ring_bytes_ - 1), first = std::min(n, ring_bytes_ - off);
    std::memcpy(dst, ring_data(r) + off, first);
    std::memcpy(static_cast<char*>(dst) + first, ring_data(r), n - first);
  }

  // Moves what fits into / out of a ring; returns whether any byte moved.
  // `seen` (optional) receives the peer's counter as read, for the wait.
  bool push(Outgoing& m, int dst, std::uint32_t* seen = nullptr) {
    RingControl* r = ring(rank_, dst);
    const std::uint32_t head = r->head.value.load(std::memory_order_relaxed);
    const std::uint32_t tail = r->tail.value.load(std::memory_order_acquire);
    if (seen != nullptr) *seen = tail;
    if (r->refused.load(std::memory_order_acquire) != 0) [[unlikely]]
      throw_send_refused("shm", op_, rank_, dst, r->refused_buffer, r->refused_message);
    const std::size_t space = ring_bytes_ - static_cast<std::uint32_t>(head - tail);
    const std::size_t n = std::min(space, sizeof m.header + m.bytes - m.done);
    if (n == 0) return false;
    std::size_t k = 0;  // of the header
    if (m.done < sizeof m.header) {
      k = std::min(n, sizeof m.header - m.done);
      to_ring(r, head, reinterpret_cast<const char*>(&m.header) + m.done, k);
    }
    if (n > k) to_ring(r, head + static_cast<std::uint32_t>(k), m.data + (m.done + k - sizeof m.header), n - k);
    r->head.store_and_wake(head + static_cast<std::uint32_t>(n));
    m.done += n;
    return true;
  }

  // Reads the header first and refuses a message whose size differs from the buffer's (telling
  // the sender through the ring), so nothing is truncated, left over or written past the buffer.
  bool pull(Incoming& m, int src, std::uint32_t* seen = nullptr) {
    RingControl* r = ring(src, rank_);
    const std::uint32_t tail = r->tail.value.load(std::memory_order_relaxed);
    const std::uint32_t head = r->head.value.load(std::memory_order_acquire);
    if (seen != nullptr) *seen = head;
    const std::size_t n = std::min<std::size_t>(static_cast<std::uint32_t>(head - tail), sizeof m.header + m.bytes - m.done);
    if (n == 0) return false;
    std::size_t k = 0;  // of the header
    if (m.done < sizeof m.header) {
      k = std::min(n, sizeof m.header - m.done);
      from_ring(r, tail, reinterpret_cast<char*>(&m.header) + m.done, k);
      if (m.done + k == sizeof m.header && m.header != m.bytes) [[unlikely]] {
        r->refused_buffer = m.bytes;
        r->refused_message = m.header;
        r->refused.store(1, std::memory_order_release);
        futex_wake_all(&r->tail.value);
        throw_receive_size_mismatch("shm", op_, rank_, src, m.bytes, m.header);
      }
    }
    // Only what the header said, which the buffer holds: n <= header + bytes - done.
    if (n > k) from_ring(r, tail + static_cast<std::uint32_t>(k), m.data + (m.done + k - sizeof m.header), n - k);
    r->tail.store_and_wake(tail + static_cast<std::uint32_t>(n));
    m.done += n;
    return true;
  }

  // ---- agreement (shm_agreement.h) ----------------------------------------------------------

  // Numbers `sig` and stores it for the step that opens the collective; returns that step.
  std::uint32_t publish(OpSignature& sig) {
    const std::uint32_t opening = steps_ + 1;
    sig.sequence = collectives_++;
    control(rank_)->opened[opening & 1] = sig;
    return opening;
  }

  // Opens a collective: publishes its signature (also in line 0 of its first side, for peers in
  // a small all-reduce), takes the first step, and compares every peer's signature with ours
  // before any data moves. `expected(p)`: the bytes peer p must declare.
  template <typename Expected>
  void open(OpSignature sig, Expected expected) {
    const std::uint32_t opening = publish(sig);
    SmallLine& first = control(rank_)->lines[side(0)][0];
    first.signature = compact(sig);
    first.tag.store(opening, std::memory_order_release);
    step();
    for (int p = 0; p < size_; ++p) {
      const OpSignature& theirs = control(p)->opened[opening & 1];
      if (p != rank_ && !agrees(sig, theirs, expected(p))) [[unlikely]]
        throw_disagreement("shm", op_, rank_, sig, p, theirs);
    }
  }
  void open(const OpSignature& sig) {
    open(sig, [&](int) { return sig.bytes; });
  }

  // ---- algorithms ---------------------------------------------------------------------------

  // All-reduce (root < 0) or reduce to root over the slots; see the file comment.
  void reduce_impl(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root) {
    const std::size_t eb = dtype_bytes(dtype);
    const OpSignature sig{.op = root < 0 ? OpKind::all_reduce : OpKind::reduce, .dtype = dtype, .reduce_op = op,
                               .root = root, .bytes = count * eb};
    if (count * eb <= slot_bytes_ && count * eb * static_cast<std::size_t>(size_) <= one_step_bytes_) {
      one_step_reduce(in, out, count, dtype, op, root, sig);
      return;
    }
    const std::size_t chunk = slot_bytes_ / eb;
    const std::size_t rounds = (count + chunk - 1) / chunk;
    const std::size_t align = std::max<std::size_t>(kLine / eb, 1);
    const char* src = static_cast<const char*>(in);
    char* dst = static_cast<char*>(out);
    const std::size_t n = static_cast<std::size_t>(size_);
    auto len = [&](std::size_t k) { return std::min(chunk, count - k * chunk); };
    // Slice j of a chunk of `l` elements: [bound(j), bound(j + 1)).
    auto bound = [&](std::size_t l, std::size_t j) {
      return j >= n ? l : std::min(l, (l * j / n) / align * align);
    };
    auto write = [&](std::size_t k) {
      const std::size_t l = len(k);
      for (std::size_t j = 0; j < n; ++j) {
        if (static_cast<int>(j) == rank_) continue;
        const std::size_t b0 = bound(l, j), b1 = bound(l, j + 1);
        if (b1 > b0) std::memcpy(slot(rank_, side(k)) + b0 * eb, src + (k * chunk + b0) * eb, (b1 - b0) * eb);
      }
    };
    const bool copy_out = root < 0 || root == rank_;
    write(0);
    open(sig);
    for (std::size_t k = 0; k < rounds; ++k) {
      const std::size_t l = len(k), me = static_cast<std::size_t>(rank_);
      const std::size_t b0 = bound(l, me), b1 = bound(l, me + 1), m = b1 - b0;
      if (m > 0) {
        auto source = [&](int p) -> const void* {
          return p == rank_ ? src + (k * chunk + b0) * eb : slot(p, side(k)) + b0 * eb;
        };
        char* acc = slot(rank_, side(k)) + b0 * eb;  // free: nobody reads our own slice yet
        reduce_into(dtype, op, acc, source(0), source(1), m);
        for (int p = 2; p < size_; ++p) reduce_into(dtype, op, acc, acc, source(p), m);
      }
      step();
      if (copy_out) {
        for (std::size_t j = 0; j < n; ++j) {
          const std::size_t c0 = bound(l, j), c1 = bound(l, j + 1);
          if (c1 > c0)
            std::memcpy(dst + (k * chunk + c0) * eb, slot(static_cast<int>(j), side(k)) + c0 * eb, (c1 - c0) * eb);
        }
      }
      if (k + 1 < rounds) {
        write(k + 1);
        step();
      }
    }
    advance(rounds);
  }

  // Small all-reduce / reduce in one step: every rank copies its input into its slot; after
  // the step every rank that wants the result reduces all slots itself, in rank order
  // (((s0 + s1) + s2) + ...: the order of the chunked algorithm, so results are bit-identical
  // across ranks and sizes). One step instead of two per round, and no copy-out of slices.
  void one_step_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root,
                       const OpSignature& sig) {
    const std::size_t bytes = count * dtype_bytes(dtype);
    const std::size_t b = side(0);
    if (bytes <= kSmallLines * kLineData && size_ > 1) {
      lines_reduce(in, out, bytes, dtype, op, root, b, sig);
      return;
    }
    if (bytes > 0) std::memcpy(slot(rank_, b), in, bytes);
    open(sig);
    if ((root < 0 || root == rank_) && count > 0) {
      reduce_into(dtype, op, out, slot(0, b), slot(1, b), count);
      for (int p = 2; p < size_; ++p) reduce_into(dtype, op, out, out, slot(p, b), count);
    }
    advance(1);
  }

  // one_step_reduce through this rank's lines of side b: the tag of every line is the step this
  // collective counts as, so a reader waits on the line itself and finds the data there. The
  // step counter is still bumped (after the lines) for the step() of later collectives, and it
  // is what a slow reader sleeps on. Every rank waits for every peer's lines even when it wants
  // no result (a reduce's non-root): seeing a peer's tag of this collective is what tells the
  // rank that the peer has finished reading the previous collective on the other side, which
  // the next collective will overwrite (the invariant of phase_). Every line carries the
  // collective's compact signature; a peer's first line is checked against ours before any data
  // is read (a peer that opened another collective left its signature in that line too).
  void lines_reduce(const void* in, void* out, std::size_t bytes, DType dtype, ReduceOp op, int root, std::size_t b,
                    OpSignature sig) {
    const std::uint32_t tag = publish(sig);
    const std::uint32_t signature = compact(sig);
    ++steps_;
    SmallLine* mine = control(rank_)->lines[b];
    const std::size_t nlines = (bytes + kLineData - 1) / kLineData;
    for (std::size_t i = 0; i < nlines; ++i) {
      std::memcpy(mine[i].data, static_cast<const char*>(in) + i * kLineData, std::min(kLineData, bytes - i * kLineData));
      mine[i].signature = signature;
      mine[i].tag.store(tag, std::memory_order_release);
    }
    control(rank_)->step.store_and_wake(steps_);
    const bool result = root < 0 || root == rank_;
    const std::size_t eb = dtype_bytes(dtype);
    for (std::size_t i = 0; i < (result ? nlines : 1); ++i) {
      for (int p = 0; p < size_; ++p) {
        if (p == rank_) continue;
        const SmallLine& l = control(p)->lines[b][i];
        wait_until([&] { return l.tag.load(std::memory_order_acquire) == tag; }, control(p)->step, p);
        if (i == 0 && l.signature != signature) [[unlikely]]
          throw_disagreement("shm", op_, rank_, sig, p, control(p)->opened[tag & 1]);
      }
      if (!result) continue;
      // In rank order, as the slot form: (((s0 + s1) + s2) + ...).
      const std::size_t n = std::min(kLineData, bytes - i * kLineData) / eb;
      char* o = static_cast<char*>(out) + i * kLineData;
      reduce_into(dtype, op, o, control(0)->lines[b][i].data, control(1)->lines[b][i].data, n);
      for (int p = 2; p < size_; ++p) reduce_into(dtype, op, o, o, control(p)->lines[b][i].data, n);
    }
    advance(1);
  }

  static std::size_t one_step_limit() {
    const char* v = std::getenv("CHORUS_SHM_ONE_STEP_BYTES");
    if (v == nullptr) return kOneStepBytes;
    try {
      return static_cast<std::size_t>(std::stoull(v));
    } catch (const std::exception&) {
      throw InputError("environment CHORUS_SHM_ONE_STEP_BYTES", "expected a byte count");
    }
  }

  // Generic exchange: sp[j]/sb[j] is what this rank sends to j, dp[p]/db[p] where what comes
  // from p goes. A header step (the collective's opening) shares every rank's byte counts, which
  // are checked for agreement pair by pair (the signature leaves them out) and give the number
  // of rounds.
  void exchange(const std::vector<const char*>& sp, const std::vector<std::size_t>& sb,
                const std::vector<char*>& dp, const std::vector<std::size_t>& db, const OpSignature& sig) {
    const std::size_t n = static_cast<std::size_t>(size_);
    const std::size_t parity = exchanges_++ % 2;
    std::uint64_t* mine = header(rank_, parity);
    for (std::size_t j = 0; j < n; ++j) {
      mine[j] = sb[j];
      mine[n + j] = db[j];
    }
    open(sig);
    const std::size_t region = slot_bytes_ / n / kLine * kLine;
    std::size_t rounds = 0;
    for (int p = 0; p < size_; ++p) {
      const std::uint64_t* row = header(p, parity);
      for (int q = 0; q < size_; ++q) {
        const std::uint64_t sent = row[q];
        const std::uint64_t expected = header(q, parity)[n + static_cast<std::size_t>(p)];
        if (sent != expected)
          throw InputError(fmt::format("{} on shm, rank {}", op_, rank_),
                           fmt::format("rank {} sends {} bytes to rank {}, but rank {} expects {} "
                                       "bytes from rank {}", p, sent, q, q, expected, p));
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
            std::memcpy(slot(rank_, side(k)) + static_cast<std::size_t>(j) * region, sp[j] + k * region, m);
    };
    if (rounds == 0) return;
    write(0);
    step();
    for (std::size_t k = 0; k < rounds; ++k) {
      for (int p = 0; p < size_; ++p)
        if (p != rank_)
          if (const std::size_t m = piece(db[p], k))
            std::memcpy(dp[p] + k * region, slot(p, side(k)) + static_cast<std::size_t>(rank_) * region, m);
      if (k + 1 < rounds) {
        write(k + 1);
        step();
      }
    }
    advance(rounds);
  }

  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::function<std::string(int)> failure_of_;  // BackendContext::failure_of
  ShmSegment seg_;
  std::size_t slot_bytes_ = 0, ring_bytes_ = 0, header_bytes_ = 0, ring_stride_ = 0;
  std::size_t control_off_ = 0, headers_off_ = 0, slots_off_ = 0, rings_off_ = 0;
  std::uint32_t steps_ = 0;
  std::uint32_t collectives_ = 0;  // the sequence number of signatures
  std::size_t exchanges_ = 0;
  // The slot of round 0 of the next collective. No collective ends with a step: ranks leave
  // as soon as they have read what they need, and a slot written in round k is written again
  // only in round k + 2 (counting across collectives), after a step every rank can pass only
  // once it has finished reading it.
  std::size_t phase_ = 0;
  bool cma_ = false;  // every rank may read every other's memory (single-copy broadcasts)
  // All-reduce / reduce of at most this many bytes (times the world size) in one step.
  std::size_t one_step_bytes_ = one_step_limit();
};

}  // namespace

std::unique_ptr<Backend> make_shm_backend(const BackendContext& ctx) {
  return std::make_unique<ShmBackend>(ctx);
}

}  // namespace chorus::rt
