// Generic algorithms every backend inherits for the operations it does not implement itself.
// They are built only on send(), recv() and send_recv(), so they are correct on any backend;
// they are rings and pairwise exchanges, i.e. bandwidth-optimal but not latency-optimal.
#include <cstring>
#include <vector>

#include "rt/backend.h"
#include "rt/dtype.h"

namespace chorus::rt {

namespace {

char* at(void* base, std::size_t elements, std::size_t elem_bytes) {
  return static_cast<char*>(base) + elements * elem_bytes;
}
const char* at(const void* base, std::size_t elements, std::size_t elem_bytes) {
  return static_cast<const char*>(base) + elements * elem_bytes;
}
int mod(int a, int n) { return ((a % n) + n) % n; }

// Ring reduce-scatter over `work` (count elements split at `bounds`, size+1 entries).
// Afterwards this rank holds the fully reduced block (rank + 1 + shift) mod size.
void ring_reduce_scatter(Backend& b, void* work, const std::vector<std::size_t>& bounds,
                         DType dtype, ReduceOp op, int shift) {
  const int n = b.size(), r = b.rank();
  const std::size_t eb = dtype_bytes(dtype);
  std::size_t max_block = 0;
  for (int j = 0; j < n; ++j) max_block = std::max(max_block, bounds[j + 1] - bounds[j]);
  std::vector<char> tmp(max_block * eb);
  for (int s = 0; s < n - 1; ++s) {
    const int send_block = mod(r - s + shift, n);
    const int recv_block = mod(r - s - 1 + shift, n);
    const std::size_t recv_len = bounds[recv_block + 1] - bounds[recv_block];
    b.send_recv(at(work, bounds[send_block], eb), (bounds[send_block + 1] - bounds[send_block]) * eb,
                mod(r + 1, n), tmp.data(), recv_len * eb, mod(r - 1, n));
    char* dst = at(work, bounds[recv_block], eb);
    reduce_into(dtype, op, dst, tmp.data(), dst, recv_len);  // lower ranks' partial first
  }
}

}  // namespace

void Backend::barrier() {
  // Dissemination barrier with one-byte tokens.
  const int n = size(), r = rank();
  char token_out = 1, token_in = 0;
  for (int k = 1; k < n; k *= 2) send_recv(&token_out, 1, mod(r + k, n), &token_in, 1, mod(r - k, n));
}

void Backend::broadcast(void* buf, std::size_t count, DType dtype, int root) {
  const std::size_t bytes = count * dtype_bytes(dtype);
  if (rank() == root) {
    for (int j = 0; j < size(); ++j)
      if (j != root) send(buf, bytes, j);
  } else {
    recv(buf, bytes, root);
  }
}

void Backend::reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                     int root) {
  std::vector<char> tmp(count * dtype_bytes(dtype));
  all_reduce(in, tmp.data(), count, dtype, op);
  if (rank() == root && count > 0) std::memcpy(out, tmp.data(), tmp.size());
}

void Backend::all_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op) {
  const int n = size(), r = rank();
  const std::size_t eb = dtype_bytes(dtype);
  if (in != out && count > 0) std::memcpy(out, in, count * eb);
  if (n == 1) return;
  std::vector<std::size_t> bounds(n + 1);
  for (int j = 0; j <= n; ++j) bounds[j] = count * static_cast<std::size_t>(j) / n;
  ring_reduce_scatter(*this, out, bounds, dtype, op, 0);
  // Ring all-gather of the reduced blocks; this rank starts with block r + 1.
  for (int s = 0; s < n - 1; ++s) {
    const int send_block = mod(r + 1 - s, n);
    const int recv_block = mod(r - s, n);
    send_recv(at(out, bounds[send_block], eb), (bounds[send_block + 1] - bounds[send_block]) * eb,
              mod(r + 1, n), at(out, bounds[recv_block], eb),
              (bounds[recv_block + 1] - bounds[recv_block]) * eb, mod(r - 1, n));
  }
}

void Backend::reduce_scatter(const void* in, void* out, std::size_t count, DType dtype,
                             ReduceOp op) {
  const int n = size(), r = rank();
  const std::size_t eb = dtype_bytes(dtype);
  std::vector<char> work(static_cast<std::size_t>(n) * count * eb);
  if (!work.empty()) std::memcpy(work.data(), in, work.size());
  std::vector<std::size_t> bounds(n + 1);
  for (int j = 0; j <= n; ++j) bounds[j] = count * static_cast<std::size_t>(j);
  if (n > 1) ring_reduce_scatter(*this, work.data(), bounds, dtype, op, -1);
  if (count > 0) std::memcpy(out, at(work.data(), bounds[r], eb), count * eb);
}

void Backend::all_gather(const void* in, void* out, std::size_t count, DType dtype) {
  Counts counts(size(), count), displs(size());
  for (int j = 0; j < size(); ++j) displs[j] = count * static_cast<std::size_t>(j);
  all_gatherv(in, count, out, counts, displs, dtype);
}

void Backend::gather(const void* in, void* out, std::size_t count, DType dtype, int root) {
  Counts counts(size(), count), displs(size());
  for (int j = 0; j < size(); ++j) displs[j] = count * static_cast<std::size_t>(j);
  gatherv(in, count, out, counts, displs, dtype, root);
}

void Backend::scatter(const void* in, void* out, std::size_t count, DType dtype, int root) {
  Counts counts(size(), count), displs(size());
  for (int j = 0; j < size(); ++j) displs[j] = count * static_cast<std::size_t>(j);
  scatterv(in, counts, displs, out, count, dtype, root);
}

void Backend::all_to_all_single(const void* in, void* out, std::size_t count, DType dtype) {
  Counts counts(size(), count), displs(size());
  for (int j = 0; j < size(); ++j) displs[j] = count * static_cast<std::size_t>(j);
  all_to_allv(in, counts, displs, out, counts, displs, dtype);
}

void Backend::all_to_all(const std::vector<const void*>& ins, const Counts& in_counts,
                         const std::vector<void*>& outs, const Counts& out_counts, DType dtype) {
  const int n = size(), r = rank();
  const std::size_t eb = dtype_bytes(dtype);
  if (in_counts[r] > 0) std::memcpy(outs[r], ins[r], in_counts[r] * eb);
  for (int s = 1; s < n; ++s) {
    const int dst = mod(r + s, n), src = mod(r - s, n);
    send_recv(ins[dst], in_counts[dst] * eb, dst, outs[src], out_counts[src] * eb, src);
  }
}

void Backend::all_gatherv(const void* in, std::size_t count, void* out, const Counts& counts,
                          const Counts& displs, DType dtype) {
  const int n = size(), r = rank();
  const std::size_t eb = dtype_bytes(dtype);
  if (count > 0 && at(out, displs[r], eb) != in) std::memcpy(at(out, displs[r], eb), in, count * eb);
  for (int s = 0; s < n - 1; ++s) {
    const int send_piece = mod(r - s, n), recv_piece = mod(r - s - 1, n);
    send_recv(at(out, displs[send_piece], eb), counts[send_piece] * eb, mod(r + 1, n),
              at(out, displs[recv_piece], eb), counts[recv_piece] * eb, mod(r - 1, n));
  }
}

void Backend::gatherv(const void* in, std::size_t count, void* out, const Counts& counts,
                      const Counts& displs, DType dtype, int root) {
  const std::size_t eb = dtype_bytes(dtype);
  if (rank() != root) {
    send(in, count * eb, root);
    return;
  }
  if (count > 0) std::memmove(at(out, displs[root], eb), in, count * eb);
  for (int p = 0; p < size(); ++p)
    if (p != root) recv(at(out, displs[p], eb), counts[p] * eb, p);
}

void Backend::scatterv(const void* in, const Counts& counts, const Counts& displs, void* out,
                       std::size_t count, DType dtype, int root) {
  const std::size_t eb = dtype_bytes(dtype);
  if (rank() != root) {
    recv(out, count * eb, root);
    return;
  }
  for (int p = 0; p < size(); ++p)
    if (p != root) send(at(in, displs[p], eb), counts[p] * eb, p);
  if (count > 0) std::memmove(out, at(in, displs[root], eb), count * eb);
}

void Backend::all_to_allv(const void* in, const Counts& send_counts, const Counts& send_displs,
                          void* out, const Counts& recv_counts, const Counts& recv_displs,
                          DType dtype) {
  const int n = size(), r = rank();
  const std::size_t eb = dtype_bytes(dtype);
  if (send_counts[r] > 0)
    std::memmove(at(out, recv_displs[r], eb), at(in, send_displs[r], eb), send_counts[r] * eb);
  for (int s = 1; s < n; ++s) {
    const int dst = mod(r + s, n), src = mod(r - s, n);
    send_recv(at(in, send_displs[dst], eb), send_counts[dst] * eb, dst,
              at(out, recv_displs[src], eb), recv_counts[src] * eb, src);
  }
}

}  // namespace chorus::rt
