// Backend "shm" (shm_backend.h): all_reduce, reduce and reduce_scatter over the slots.
// All-reduce is a reduce-scatter / all-gather over the slots: each rank copies the parts of its
// chunk other ranks need into its slot, reduces its own slice of the chunk from all slots (in
// rank order, so every rank gets bit-identical results), publishes the slice, and copies the
// other slices out: each byte crosses memory about three times, independent of the number of
// ranks. Small all-reduces (and reduces) take one step instead: every rank reduces all slots
// itself, in the same rank order; the smallest ones (up to 448 B) go through the transport's
// lines.
#include <algorithm>
#include <cstring>

#include "rt/backends/shm/shm_backend.h"
#include "rt/dtype.h"
#include "rt/runtime_config.h"

namespace chorus::rt::shm_backend {

using namespace shm;

void ShmBackend::all_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op) {
  t_.begin("all_reduce");
  reduce_impl(in, out, count, dtype, op, -1);
}

void ShmBackend::reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root) {
  t_.begin("reduce");
  reduce_impl(in, out, count, dtype, op, root);
}

void ShmBackend::reduce_scatter(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op) {
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

// All-reduce (root < 0) or reduce to root over the slots; see the file comment.
void ShmBackend::reduce_impl(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root) {
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
          std::memcpy(dst + (k * chunk + c0) * eb, t_.slot(static_cast<int>(j), t_.side(k)) + c0 * eb, (c1 - c0) * eb);
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
void ShmBackend::one_step_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root,
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
std::size_t ShmBackend::one_step_limit() {
  return env_bytes("CHORUS_SHM_ONE_STEP_BYTES", kOneStepBytes, 0, std::size_t{1} << 30);
}

}  // namespace chorus::rt::shm_backend
