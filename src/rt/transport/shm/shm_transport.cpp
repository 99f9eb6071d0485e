// The transport's set-up (the segment and its layout, agreed by every rank) and its waiting.
#include "rt/transport/shm/shm_transport.h"

#include "rt/runtime_config.h"

#include <algorithm>
#include <cstdio>
#include <bit>
#include <cstdlib>
#include <fmt/format.h>
#include <memory>
#include <string>

#include "core/error.h"
#include "rt/errors.h"
#include "rt/transport/shm/fd_passing.h"

namespace chorus::rt {

using namespace shm;

namespace {

// CHORUS_SHM_SLOT_BYTES: a whole decimal byte count in [4096, 1 GiB], rounded up to pages.
std::size_t env_slot_bytes(std::size_t fallback) {
  return round_up(env_bytes("CHORUS_SHM_SLOT_BYTES", fallback, kPage, kMaxSlotBytes), kPage);
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

}  // namespace

ShmTransport::ShmTransport(const BackendContext& ctx)
    : rank_(ctx.rank), size_(ctx.size), timeout_(ctx.timeout), failure_of_(ctx.failure_of), aborted_(ctx.aborted) {
  if (!ctx.single_host) throw InputError("init shm", "backend 'shm' needs every rank on one host; use mpi or gloo");
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
  // (fd_passing.h): the segment has no name, and disappears with the last process that maps it,
  // however the job ends.
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
    if (h->magic != kMagic || h->world_size != static_cast<std::uint32_t>(size_) || h->slot_bytes != slot_bytes_ ||
        h->ring_bytes != ring_bytes_)
      throw CommError(
          "shm: segment layout differs between ranks (set CHORUS_SHM_SLOT_BYTES "
          "the same on every rank)");
  }
  seg_.release_fd();
  control(rank_)->pid = static_cast<std::int32_t>(::getpid());
  control(rank_)->probe_address.store(probe_address(), std::memory_order_release);
  const bool cma_wanted = env_cma_wanted();
  ctx.store->barrier(ctx.key_prefix + "/mapped", size_, wait);
  ring_stride_ = ring_stride;
  if (size_ > 1) {  // every rank probes every other, then all read the same verdicts
    bool can = cma_wanted;
    for (int p = 0; p < size_ && can; ++p) {
      std::uint64_t got = 0;
      can = p == rank_ ||
            (copy_process_memory(control(p)->pid, &got, control(p)->probe_address.load(std::memory_order_acquire),
                                 sizeof got, false) &&
             got == probe_value());
    }
    control(rank_)->can_read_peers.store(can ? 1 : 0, std::memory_order_release);
    ctx.store->barrier(ctx.key_prefix + "/cma", size_, wait);
    cma_ = true;
    for (int p = 0; p < size_; ++p) cma_ = cma_ && control(p)->can_read_peers.load(std::memory_order_acquire) == 1;
  }
}

void ShmTransport::check_alive(int peer) {
  const auto now = std::chrono::steady_clock::now();
  if (t_deadline == std::chrono::steady_clock::time_point{}) {
    t_deadline = now + timeout_;
    t_last_check = now;
    t_said_waiting = false;
  }
  if (now > t_deadline)
    throw TimeoutError(
        fmt::format("shm {}: rank {} timed out waiting for rank {} after {} ms "
                    "(the peer is stuck or the ranks disagree on the call)",
                    t_op, rank_, peer, timeout_.count()));
  if (const std::string* why = aborted_ ? aborted_->reason() : nullptr) [[unlikely]]
    throw CommError(fmt::format("shm {}: {} (rank {} was waiting for rank {})", t_op, *why, rank_, peer));
  if (now - t_last_check < std::chrono::milliseconds(50)) return;
  t_last_check = now;
  // One line when the wait starts to matter (a twentieth of the timeout, 1 to 10 s, as
  // finalize's), the other when it gives up (above): not one a second.
  const auto waited = now - (t_deadline - timeout_);
  if (!t_said_waiting && waited >= wait_report_after(timeout_)) {
    t_said_waiting = true;
    std::fprintf(stderr, "chorus rt: shm %s: rank %d waiting for rank %d (%.0f s so far; gives up in %.0f s)\n", t_op,
                 rank_, peer, std::chrono::duration<double>(waited).count(),
                 std::chrono::duration<double>(t_deadline - now).count());
  }
  // Name every dead or aborted rank: after the first death, other ranks exit on their error too,
  // and a rank that checks late must still name the first one.
  std::string dead;
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    std::string gone;
    if (process_dead(control(p)->pid)) {
      gone = gone_peer(failure_of_, p, control(p)->pid);
    } else if (control(p)->aborted.load(std::memory_order_acquire) != 0) {
      const std::string why = failure_of_ ? failure_of_(p) : std::string();
      gone = fmt::format("rank {} failed first: {}", p, why.empty() ? "it aborted" : why);
    }
    if (!gone.empty()) dead += fmt::format("{}{}", dead.empty() ? "" : ", ", gone);
  }
  if (!dead.empty())
    throw CommError(fmt::format("shm {}: {}; rank {} cannot complete the operation", t_op, dead, rank_));
}

}  // namespace chorus::rt
