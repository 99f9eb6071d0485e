// Recursive doubling all-reduce: log2(n) rounds; in round k every rank exchanges its whole
// partial result with rank XOR 2^k and reduces. Latency-optimal for small messages (one
// message per round, no segmentation); only for power-of-two worlds. Bit-identical on every
// rank: each reduction takes the lower-ranked half's partial first, so both partners of a
// round compute op(low, high) from the same inputs in the same order.
#include <cstring>
#include <vector>

#include "rt/algorithms/algorithms.h"
#include "rt/dtype.h"

namespace chorus::rt::algorithms {

void recursive_doubling_all_reduce(Backend& b, const void* in, void* out, std::size_t count,
                                   DType dtype, ReduceOp op) {
  const int n = b.size(), r = b.rank();
  const std::size_t bytes = count * dtype_bytes(dtype);
  if (in != out && bytes > 0) std::memcpy(out, in, bytes);
  if (n == 1 || bytes == 0) return;
  std::vector<char> theirs(bytes);
  for (int mask = 1; mask < n; mask <<= 1) {
    const int peer = r ^ mask;
    b.send_recv(out, bytes, peer, theirs.data(), bytes, peer);
    if (r < peer)
      reduce_into(dtype, op, out, out, theirs.data(), count);
    else
      reduce_into(dtype, op, out, theirs.data(), out, count);
  }
}

}  // namespace chorus::rt::algorithms
