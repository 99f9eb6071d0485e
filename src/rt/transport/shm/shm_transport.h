#pragma once
// The shared-memory transport under backend shm (backends/shm/): one segment per world,
// anonymous memory whose descriptor rank 0 passes to the others (segment.h, fd_passing.h), laid
// out as docs/runtime-backends.md draws it. Its concepts, one file each:
//   shm_transport.cpp  set-up (the segment, its layout, the cross-memory-attach probe), waiting
//   step_barrier.cpp   steps (every rank bumps its step counter and waits for all others), the
//                      opening step that compares every peer's call signature before data moves
//   rings.cpp          point to point: one ring buffer per ordered pair, messages with their size
//   lines.cpp          the small-reduction protocol: cache lines carrying data and a tag
//   cma.cpp            cross-memory attach (process_vm_readv / writev) between ranks
// Each rank owns two data slots (double buffering). No collective ends with a step of its own:
// the next one starts on the other slot, and its first step protects the last reads (phase_).
// Waiting spins briefly, then yields, then sleeps on a futex, so ranks may outnumber cores;
// every wait checks the operation deadline, whether the awaited peer is still alive, and whether
// the runtime was aborted (Runtime::abort).
#include <sched.h>

#include <atomic>
#include <memory>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "rt/backends/agreement.h"
#include "rt/backends/backends.h"
#include "rt/transport/shm/futex.h"
#include "rt/transport/shm/segment.h"

namespace chorus::rt {

namespace shm {

constexpr std::uint64_t kMagic = 0x63686f7275737368ULL;  // "chorussh"
constexpr std::size_t kPage = 4096;
constexpr std::size_t kLine = 64;
constexpr int kMaxWorld = 4096;
constexpr std::size_t kMaxSlotBytes = std::size_t{1} << 30;

inline std::size_t round_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }
inline void cpu_relax() { __builtin_ia32_pause(); }

struct alignas(kPage) SegmentHeader {
  std::uint64_t magic;
  std::uint32_t world_size;
  std::uint64_t slot_bytes;
  std::uint64_t ring_bytes;
};

// One cache line of a small reduction (lines.cpp): the data, and the tag of the collective that
// wrote it, stored (release) after the data and the collective's compact signature. Line 0 of a
// side also carries the tag and signature of every other collective opened on that side, so
// that a rank in a small all-reduce learns that a peer called something else.
constexpr std::size_t kLineData = 56;   // a multiple of every element size
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
  // Cross-memory attach (cma.cpp): where this process keeps its probe value, for the others to
  // read at init, and whether this rank could read every other rank's.
  std::atomic<std::uint64_t> probe_address{0};
  std::atomic<std::uint32_t> can_read_peers{0};
  // Set when this rank aborted (rt::abort): a peer waiting for it ends at once, naming the
  // reason the rank published, instead of waiting out its timeout for a rank that is alive.
  std::atomic<std::uint32_t> aborted{0};
  SmallLine lines[2][kSmallLines];  // one set per slot side (see side())
};

// Each message is an 8-byte header (its byte count) and its bytes.
struct alignas(128) RingControl {
  SharedCounter head;               // bytes written by the sender (wraps at 2^32)
  alignas(128) SharedCounter tail;  // bytes consumed by the receiver
  // Set by a receiver whose buffer did not match a message's size, for the sender (which reads
  // the tail's line anyway): the two sizes, then the flag (release).
  std::uint64_t refused_buffer = 0, refused_message = 0;
  std::atomic<std::uint32_t> refused{0};
};
static_assert(sizeof(RankControl) == 1152 && sizeof(RingControl) == 256,
              "the segment layout of docs/runtime-backends.md");

// What the calling thread is doing (collectives, sends and receives run on separate threads): the
// operation's name and deadline, and when it last checked its peers' liveness.
inline thread_local const char* t_op = "";
inline thread_local std::chrono::steady_clock::time_point t_deadline, t_last_check;
inline thread_local bool t_said_waiting = false;  // the operation's wait was announced (check_alive)

// Cross-memory attach (cma.cpp). Copies `bytes` between `local` and `remote` in process `pid`
// (`write`: into it, else out of it); false (errno set) if the kernel refuses.
bool copy_process_memory(int pid, void* local, std::uint64_t remote, std::size_t bytes, bool write);
// The address of a value every process holds at a different address (ASLR), and the value.
std::uint64_t probe_address();
std::uint64_t probe_value();
// CHORUS_SHM_CMA: "0" turns single-copy transfers off, "1" (the default) lets the probe decide.
bool env_cma_wanted();

}  // namespace shm

class ShmTransport {
 public:
  // Maps the segment (rank 0 creates it) and probes cross-memory attach; throws InputError for a
  // bad setting or world, CommError when a rank cannot join.
  explicit ShmTransport(const BackendContext& ctx);

  int rank() const { return rank_; }
  int size() const { return size_; }
  std::size_t slot_bytes() const { return slot_bytes_; }
  // Every rank may read every other's memory (single-copy broadcasts).
  bool cma() const { return cma_; }

  // ---- layout
  shm::RankControl* control(int r) const { return reinterpret_cast<shm::RankControl*>(seg_.data() + control_off_) + r; }
  char* slot(int r, std::size_t buffer) const {
    return seg_.data() + slots_off_ + (static_cast<std::size_t>(r) * 2 + buffer) * slot_bytes_;
  }
  // Rank r's exchange header of `parity`: 2 * size() byte counts.
  std::uint64_t* header(int r, std::size_t parity) const {
    return reinterpret_cast<std::uint64_t*>(seg_.data() + headers_off_ + static_cast<std::size_t>(r) * header_bytes_ +
                                            parity * header_bytes_ / 2);
  }
  // Which of a rank's two slots round k of the current collective uses (see phase_).
  std::size_t side(std::size_t k) const { return (phase_ + k) & 1; }
  // Ends a collective of `rounds` rounds without a closing step: its last slot may still be
  // read by slower ranks, so the next collective starts on the other one.
  void advance(std::size_t rounds) { phase_ = (phase_ + rounds) & 1; }

  // ---- waiting
  // Names the operation the calling thread runs (errors) and restarts its clock. The clock
  // starts at its first slow wait (check_alive), not here: a small collective that never leaves
  // the spin phase of wait_until reads no clock at all (two clock reads were a quarter of an 8 B
  // all-reduce). The spin phase is a few microseconds, so the deadline moves by that much.
  void begin(const char* what) {
    shm::t_op = what;
    shm::t_deadline = {};
  }
  const char* op() const { return shm::t_op; }
  // How disagreements name a call's algorithm (the backend's names: describe_algorithm).
  void set_algorithm_namer(AlgorithmNamer name) { name_algorithm_ = std::move(name); }
  // Throws TimeoutError past the deadline, CommError naming every dead or aborted peer.
  void check_alive(int peer);
  // Tells the peers this rank aborted (RankControl::aborted).
  void mark_aborted() { control(rank_)->aborted.store(1, std::memory_order_release); }
  // Sleeps until `done()` holds; `word` is the counter whose change may make it hold.
  template <typename Done>
  void wait_until(Done done, SharedCounter& word, int peer) {
    for (int i = 0;; ++i) {
      if (done()) return;
      if (i < 100) {
        shm::cpu_relax();
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
  // Waits until the counter differs from `seen`, the value a failed push / pull looked at (not a
  // value loaded now: the peer may have moved it in between, for the last time).
  void wait_change(SharedCounter& word, std::uint32_t seen, int peer) {
    wait_until([&] { return word.value.load(std::memory_order_acquire) != seen; }, word, peer);
  }

  // ---- steps (step_barrier.cpp)
  // Completes one step: publish ours, wait until every rank has completed it.
  void step();
  // Numbers `sig` and stores it for the step that opens the collective; returns that step.
  std::uint32_t publish(OpSignature& sig) {
    const std::uint32_t opening = steps_ + 1;
    sig.sequence = collectives_++;
    control(rank_)->opened[opening & 1] = sig;
    return opening;
  }
  // Opens a collective: publishes its signature (also in line 0 of its first side, for peers in
  // a small reduction), takes the first step, and compares every peer's signature with ours
  // before any data moves. `expected(p)`: the bytes peer p must declare.
  template <typename Expected>
  void open(OpSignature sig, Expected expected) {
    const std::uint32_t opening = publish(sig);
    shm::SmallLine& first = control(rank_)->lines[side(0)][0];
    first.signature = compact(sig);
    first.tag.store(opening, std::memory_order_release);
    step();
    for (int p = 0; p < size_; ++p) {
      const OpSignature& theirs = control(p)->opened[opening & 1];
      if (p != rank_ && !agrees(sig, theirs, expected(p))) [[unlikely]]
        throw_disagreement("shm", op(), rank_, sig, p, theirs, name_algorithm_);
    }
  }
  void open(const OpSignature& sig) {
    open(sig, [&](int) { return sig.bytes; });
  }
  // The parity of the next exchange's header (the exchange engine alternates two).
  std::size_t next_exchange_parity() { return exchanges_++ % 2; }

  // ---- point to point (rings.cpp)
  void ring_send(const void* buf, std::size_t bytes, int dst);
  void ring_recv(void* buf, std::size_t bytes, int src);
  // Sends to dst and receives from src at once (never deadlocks on large messages).
  void ring_send_recv(const void* sbuf, std::size_t sbytes, int dst, void* rbuf, std::size_t rbytes, int src);

  // ---- small reductions (lines.cpp)
  // All-reduce (root < 0) or reduce of at most kSmallLines * kLineData bytes in one step, through
  // this rank's lines of side(0); more than one rank.
  void lines_reduce(const void* in, void* out, std::size_t bytes, DType dtype, ReduceOp reduce_op, int root,
                    OpSignature sig);

 private:
  struct Outgoing;
  struct Incoming;
  shm::RingControl* ring(int from, int to) const {
    return reinterpret_cast<shm::RingControl*>(
        seg_.data() + rings_off_ +
        (static_cast<std::size_t>(from) * static_cast<std::size_t>(size_) + static_cast<std::size_t>(to)) *
            ring_stride_);
  }
  char* ring_data(shm::RingControl* r) const { return reinterpret_cast<char*>(r) + sizeof(shm::RingControl); }
  void to_ring(shm::RingControl* r, std::uint32_t at, const void* src, std::size_t n) const;
  void from_ring(shm::RingControl* r, std::uint32_t at, void* dst, std::size_t n) const;
  bool push(Outgoing& m, int dst, std::uint32_t* seen = nullptr);
  bool pull(Incoming& m, int src, std::uint32_t* seen = nullptr);
  void probe_cross_memory_attach(const BackendContext& ctx, std::chrono::milliseconds wait);

  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::function<std::string(int)> failure_of_;  // BackendContext::failure_of
  std::shared_ptr<const AbortMark> aborted_;    // BackendContext::aborted
  AlgorithmNamer name_algorithm_;
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
  bool cma_ = false;
};

}  // namespace chorus::rt
