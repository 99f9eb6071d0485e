// Point to point on Gloo's unbound buffers: the fallback collectives' messages on one slot, the
// application's on another, each announced by its size on a third so that a receive refuses a
// message that does not fit its buffer instead of letting Gloo abort the process.
#include <gloo/transport/unbound_buffer.h>

#include <cstdint>
#include <memory>

#include "rt/backends/agreement.h"
#include "rt/backends/gloo/gloo_backend.h"

namespace chorus::rt::gloo_backend {

void GlooBackend::send(const void* buf, std::size_t bytes, int dst) { send_on(buf, bytes, dst, kP2PSlot); }

void GlooBackend::recv(void* buf, std::size_t bytes, int src) { recv_on(buf, bytes, src, kP2PSlot); }

void GlooBackend::user_send(const void* buf, std::size_t bytes, int dst) {
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

void GlooBackend::user_recv(void* buf, std::size_t bytes, int src) {
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

void GlooBackend::send_on(const void* buf, std::size_t bytes, int dst, std::uint64_t slot) {
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

void GlooBackend::recv_on(void* buf, std::size_t bytes, int src, std::uint64_t slot) {
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

void GlooBackend::send_recv(const void* sbuf, std::size_t sbytes, int dst, void* rbuf, std::size_t rbytes, int src) {
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

}  // namespace chorus::rt::gloo_backend
