// Pairwise exchange all-to-all: n-1 steps; in step s rank r sends to r+s and receives from r-s,
// so each step is a permutation and every pair meets exactly once.
#include <cstring>

#include "rt/algorithms/algorithms.h"
#include "rt/dtype.h"

namespace chorus::rt::algorithms {

void pairwise_all_to_all(Backend& b, const std::vector<const void*>& ins, const Counts& in_counts,
                         const std::vector<void*>& outs, const Counts& out_counts, DType dtype) {
  const int n = b.size(), r = b.rank();
  const std::size_t eb = dtype_bytes(dtype);
  if (in_counts[r] > 0) std::memcpy(outs[r], ins[r], in_counts[r] * eb);
  for (int s = 1; s < n; ++s) {
    const int dst = mod(r + s, n), src = mod(r - s, n);
    b.send_recv(ins[dst], in_counts[dst] * eb, dst, outs[src], out_counts[src] * eb, src);
  }
}

void pairwise_all_to_allv(Backend& b, const void* in, const Counts& send_counts, const Counts& send_displs, void* out,
                          const Counts& recv_counts, const Counts& recv_displs, DType dtype) {
  const int n = b.size(), r = b.rank();
  const std::size_t eb = dtype_bytes(dtype);
  if (send_counts[r] > 0) std::memmove(at(out, recv_displs[r], eb), at(in, send_displs[r], eb), send_counts[r] * eb);
  for (int s = 1; s < n; ++s) {
    const int dst = mod(r + s, n), src = mod(r - s, n);
    b.send_recv(at(in, send_displs[dst], eb), send_counts[dst] * eb, dst, at(out, recv_displs[src], eb),
                recv_counts[src] * eb, src);
  }
}

}  // namespace chorus::rt::algorithms
