// Ring algorithms: bandwidth-optimal, n-1 steps each for reduce-scatter and all-gather; every
// rank sends to rank+1 and receives from rank-1 at once, so no step can deadlock.
#include <algorithm>
#include <cstring>

#include "rt/algorithms/algorithms.h"
#include "rt/dtype.h"

namespace chorus::rt::algorithms {

namespace {

// Ring reduce-scatter over `work` (count elements split at `bounds`, size+1 entries).
// Afterwards this rank holds the fully reduced block (rank + 1 + shift) mod size.
void reduce_scatter_blocks(Backend& b, void* work, const std::vector<std::size_t>& bounds, DType dtype, ReduceOp op,
                           int shift) {
  const int n = b.size(), r = b.rank();
  const std::size_t eb = dtype_bytes(dtype);
  std::size_t max_block = 0;
  for (int j = 0; j < n; ++j) max_block = std::max(max_block, bounds[j + 1] - bounds[j]);
  std::vector<char> tmp(max_block * eb);
  for (int s = 0; s < n - 1; ++s) {
    const int send_block = mod(r - s + shift, n);
    const int recv_block = mod(r - s - 1 + shift, n);
    const std::size_t recv_len = bounds[recv_block + 1] - bounds[recv_block];
    b.send_recv(at(work, bounds[send_block], eb), (bounds[send_block + 1] - bounds[send_block]) * eb, mod(r + 1, n),
                tmp.data(), recv_len * eb, mod(r - 1, n));
    char* dst = at(work, bounds[recv_block], eb);
    reduce_into(dtype, op, dst, tmp.data(), dst, recv_len);  // lower ranks' partial first
  }
}

}  // namespace

void ring_all_reduce(Backend& b, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op) {
  const int n = b.size(), r = b.rank();
  const std::size_t eb = dtype_bytes(dtype);
  if (in != out && count > 0) std::memcpy(out, in, count * eb);
  if (n == 1) return;
  std::vector<std::size_t> bounds(n + 1);
  for (int j = 0; j <= n; ++j) bounds[j] = count * static_cast<std::size_t>(j) / n;
  reduce_scatter_blocks(b, out, bounds, dtype, op, 0);
  // Ring all-gather of the reduced blocks; this rank starts with block r + 1.
  for (int s = 0; s < n - 1; ++s) {
    const int send_block = mod(r + 1 - s, n);
    const int recv_block = mod(r - s, n);
    b.send_recv(at(out, bounds[send_block], eb), (bounds[send_block + 1] - bounds[send_block]) * eb, mod(r + 1, n),
                at(out, bounds[recv_block], eb), (bounds[recv_block + 1] - bounds[recv_block]) * eb, mod(r - 1, n));
  }
}

void ring_reduce_scatter(Backend& b, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op) {
  const int n = b.size(), r = b.rank();
  const std::size_t eb = dtype_bytes(dtype);
  std::vector<char> work(static_cast<std::size_t>(n) * count * eb);
  if (!work.empty()) std::memcpy(work.data(), in, work.size());
  std::vector<std::size_t> bounds(n + 1);
  for (int j = 0; j <= n; ++j) bounds[j] = count * static_cast<std::size_t>(j);
  if (n > 1) reduce_scatter_blocks(b, work.data(), bounds, dtype, op, -1);
  if (count > 0) std::memcpy(out, at(work.data(), bounds[r], eb), count * eb);
}

void ring_all_gatherv(Backend& b, const void* in, std::size_t count, void* out, const Counts& counts,
                      const Counts& displs, DType dtype) {
  const int n = b.size(), r = b.rank();
  const std::size_t eb = dtype_bytes(dtype);
  if (count > 0 && at(out, displs[r], eb) != in) std::memcpy(at(out, displs[r], eb), in, count * eb);
  for (int s = 0; s < n - 1; ++s) {
    const int send_piece = mod(r - s, n), recv_piece = mod(r - s - 1, n);
    b.send_recv(at(out, displs[send_piece], eb), counts[send_piece] * eb, mod(r + 1, n),
                at(out, displs[recv_piece], eb), counts[recv_piece] * eb, mod(r - 1, n));
  }
}

}  // namespace chorus::rt::algorithms
