// Dissemination barrier (Hensgen, Finkel and Manber): in round k every rank signals rank + 2^k
// and waits for rank - 2^k; after ceil(log2 n) rounds every rank has heard from all others.
#include "rt/algorithms/algorithms.h"

namespace chorus::rt::algorithms {

void dissemination_barrier(Backend& b) {
  const int n = b.size(), r = b.rank();
  char token_out = 1, token_in = 0;
  for (int k = 1; k < n; k *= 2) b.send_recv(&token_out, 1, mod(r + k, n), &token_in, 1, mod(r - k, n));
}

}  // namespace chorus::rt::algorithms
