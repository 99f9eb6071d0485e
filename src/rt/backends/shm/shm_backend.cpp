// Backend "shm" (shm_backend.h): set-up, point to point, the barrier, and broadcast.
//
// Large broadcasts are single-copy where the kernel allows it (cross-memory attach, as Open
// MPI's and MPICH's shared-memory transports do): the root publishes its buffer's address and
// every other rank reads it straight out of the root's memory with process_vm_readv, instead
// of the root copying it into its slot and the others out of it. CHORUS_SHM_CMA=0 turns it off.
#include "rt/backends/shm/shm_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "rt/backends/operation_table.h"
#include "rt/checking.h"
#include "rt/dtype.h"
#include "rt/errors.h"

namespace chorus::rt::shm_backend {

using namespace shm;

ShmBackend::ShmBackend(const BackendContext& ctx) : Backend(operations()), t_(ctx), rank_(ctx.rank), size_(ctx.size) {
  t_.set_algorithm_namer([this](CollectiveKind op, std::uint16_t a) { return describe_algorithm(*this, op, a); });
}

// Every kind on shm's own code (send and recv: the generic ones, which are this backend's send()
// and recv()).
const OperationTable& ShmBackend::operations() {
  using K = CollectiveKind;
  static const OperationTable table =
      own_operations<ShmBackend, K::kBarrier, K::kBroadcast, K::kReduce, K::kAllReduce, K::kReduceScatter,
                     K::kAllGather, K::kGather, K::kScatter, K::kAllToAllSingle, K::kAllToAll, K::kAllGatherv,
                     K::kGatherv, K::kScatterv, K::kAllToAllv>();
  return table;
}

void ShmBackend::send(const void* buf, std::size_t bytes, int dst) {
  t_.begin("send");
  t_.ring_send(buf, bytes, dst);
}
void ShmBackend::recv(void* buf, std::size_t bytes, int src) {
  t_.begin("recv");
  t_.ring_recv(buf, bytes, src);
}
void ShmBackend::send_recv(const void* sbuf, std::size_t sbytes, int dst, void* rbuf, std::size_t rbytes, int src) {
  t_.begin("send_recv");
  t_.ring_send_recv(sbuf, sbytes, dst, rbuf, rbytes, src);
}

void ShmBackend::barrier() {
  t_.begin("barrier");
  t_.open({.op = CollectiveKind::kBarrier});
}

// The operations whose data-path signature is their own (gather, scatter and all_to_all_single
// open as the exchanges they run on, whose counts are checked pair by pair instead).
void ShmBackend::agree_empty(const Call& c) {
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

void ShmBackend::broadcast(void* buf, std::size_t count, DType dtype, int root) {
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
void ShmBackend::single_copy_broadcast(char* data, std::size_t bytes, int root, const OpSignature& sig) {
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
          fmt::format("shm broadcast on rank {}: rank {}'s buffer holds {} bytes, the copy would reach byte {}", rank_,
                      peer, buffer(peer)[1], end));
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

}  // namespace chorus::rt::shm_backend

namespace chorus::rt {

std::unique_ptr<Backend> make_shm_backend(const BackendContext& ctx) {
  return std::make_unique<shm_backend::ShmBackend>(ctx);
}

}  // namespace chorus::rt
