#pragma once
// The generic collective algorithms, one file each, built only on a backend's point-to-point
// primitives (send, recv, send_recv), so they are correct on any backend. Backends inherit
// them (backend.cpp) for the operations their library lacks. They are bandwidth-optimal
// (rings, pairwise exchanges) or latency-optimal for tiny messages (dissemination), not both.
// Counts and displacements are in elements of `dtype`.
#include <cstddef>
#include <vector>

#include "rt/backend.h"

namespace chorus::rt::algorithms {

// ring.cpp: each of the n-1 steps sends one block to rank+1 and receives one from rank-1.
void ring_all_reduce(Backend& b, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op);
// `in` holds size()*count elements; `out` gets this rank's reduced block.
void ring_reduce_scatter(Backend& b, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op);
void ring_all_gatherv(Backend& b, const void* in, std::size_t count, void* out, const Counts& counts,
                      const Counts& displs, DType dtype);

// dissemination.cpp: ceil(log2 n) rounds of one-byte tokens to rank + 2^k.
void dissemination_barrier(Backend& b);

// pairwise.cpp: in step s, send to rank+s and receive from rank-s.
void pairwise_all_to_all(Backend& b, const std::vector<const void*>& ins, const Counts& in_counts,
                         const std::vector<void*>& outs, const Counts& out_counts, DType dtype);
void pairwise_all_to_allv(Backend& b, const void* in, const Counts& send_counts, const Counts& send_displs, void* out,
                          const Counts& recv_counts, const Counts& recv_displs, DType dtype);

// linear.cpp: the root talks to every other rank in turn (flat tree).
void linear_broadcast(Backend& b, void* buf, std::size_t count, DType dtype, int root);
void linear_gatherv(Backend& b, const void* in, std::size_t count, void* out, const Counts& counts,
                    const Counts& displs, DType dtype, int root);
void linear_scatterv(Backend& b, const void* in, const Counts& counts, const Counts& displs, void* out,
                     std::size_t count, DType dtype, int root);

// Helpers shared by the algorithm files.
inline int mod(int a, int n) { return ((a % n) + n) % n; }
inline char* at(void* base, std::size_t elements, std::size_t elem_bytes) {
  return static_cast<char*>(base) + elements * elem_bytes;
}
inline const char* at(const void* base, std::size_t elements, std::size_t elem_bytes) {
  return static_cast<const char*>(base) + elements * elem_bytes;
}

}  // namespace chorus::rt::algorithms
