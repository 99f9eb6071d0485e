// Point to point: one ring buffer per ordered pair of ranks. A message is its 8-byte header (its
// byte count), then its bytes; the receiver reads the header first and refuses a message whose
// size differs from its buffer's, telling the sender through the ring, so nothing is truncated,
// left over or written past a buffer.
#include <algorithm>
#include <cstring>
#include <unistd.h>

#include "rt/transport/shm/shm_transport.h"

namespace chorus::rt {

using namespace shm;

// A message on a ring: its header, then its bytes; `done` counts both.
struct ShmTransport::Outgoing {
  const char* data;
  std::size_t bytes;
  std::uint64_t header = bytes;
  std::size_t done = 0;
  bool finished() const { return done == sizeof header + bytes; }
};
struct ShmTransport::Incoming {
  char* data;
  std::size_t bytes;
  std::uint64_t header = 0;
  std::size_t done = 0;
  bool finished() const { return done == sizeof header + bytes; }
};

// Copies n bytes to / from ring offset `at` (a counter value), wrapping at the end.
void ShmTransport::to_ring(RingControl* r, std::uint32_t at, const void* src, std::size_t n) const {
  const std::size_t off = at & (ring_bytes_ - 1), first = std::min(n, ring_bytes_ - off);
  std::memcpy(ring_data(r) + off, src, first);
  std::memcpy(ring_data(r), static_cast<const char*>(src) + first, n - first);
}
void ShmTransport::from_ring(RingControl* r, std::uint32_t at, void* dst, std::size_t n) const {
  const std::size_t off = at & (ring_bytes_ - 1), first = std::min(n, ring_bytes_ - off);
  std::memcpy(dst, ring_data(r) + off, first);
  std::memcpy(static_cast<char*>(dst) + first, ring_data(r), n - first);
}

// Moves what fits into a ring; returns whether any byte moved. `seen` (optional) receives the
// peer's counter as read, for the wait.
bool ShmTransport::push(Outgoing& m, int dst, std::uint32_t* seen) {
  RingControl* r = ring(rank_, dst);
  const std::uint32_t head = r->head.value.load(std::memory_order_relaxed);
  const std::uint32_t tail = r->tail.value.load(std::memory_order_acquire);
  if (seen != nullptr) *seen = tail;
  if (r->refused.load(std::memory_order_acquire) != 0) [[unlikely]]
    throw_send_refused("shm", op(), rank_, dst, r->refused_buffer, r->refused_message);
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

// Moves what is there out of a ring, the header first.
bool ShmTransport::pull(Incoming& m, int src, std::uint32_t* seen) {
  RingControl* r = ring(src, rank_);
  const std::uint32_t tail = r->tail.value.load(std::memory_order_relaxed);
  const std::uint32_t head = r->head.value.load(std::memory_order_acquire);
  if (seen != nullptr) *seen = head;
  const std::size_t n =
      std::min<std::size_t>(static_cast<std::uint32_t>(head - tail), sizeof m.header + m.bytes - m.done);
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
      throw_receive_size_mismatch("shm", op(), rank_, src, m.bytes, m.header);
    }
  }
  // Only what the header said, which the buffer holds: n <= header + bytes - done.
  if (n > k) from_ring(r, tail + static_cast<std::uint32_t>(k), m.data + (m.done + k - sizeof m.header), n - k);
  r->tail.store_and_wake(tail + static_cast<std::uint32_t>(n));
  m.done += n;
  return true;
}

void ShmTransport::ring_send(const void* buf, std::size_t bytes, int dst) {
  Outgoing m{static_cast<const char*>(buf), bytes};
  RingControl* r = ring(rank_, dst);
  while (!m.finished()) {
    std::uint32_t seen = 0;
    if (!push(m, dst, &seen))
      wait_until(
          [&] {
            return r->tail.value.load(std::memory_order_acquire) != seen ||
                   r->refused.load(std::memory_order_acquire) != 0;
          },
          r->tail, dst);
  }
}

void ShmTransport::ring_recv(void* buf, std::size_t bytes, int src) {
  Incoming m{static_cast<char*>(buf), bytes};
  while (!m.finished()) {
    std::uint32_t seen = 0;
    if (!pull(m, src, &seen)) wait_change(ring(src, rank_)->head, seen, src);
  }
}

void ShmTransport::ring_send_recv(const void* sbuf, std::size_t sbytes, int dst, void* rbuf, std::size_t rbytes,
                                  int src) {
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

}  // namespace chorus::rt
