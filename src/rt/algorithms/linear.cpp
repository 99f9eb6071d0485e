// Linear (flat-tree) rooted collectives: the root sends to or receives from every other rank in
// turn. n-1 messages at the root; fine for the vector forms whose sizes differ per rank.
#include <cstring>

#include "rt/algorithms/algorithms.h"
#include "rt/dtype.h"

namespace chorus::rt::algorithms {

void linear_broadcast(Backend& b, void* buf, std::size_t count, DType dtype, int root) {
  const std::size_t bytes = count * dtype_bytes(dtype);
  if (b.rank() == root) {
    for (int j = 0; j < b.size(); ++j)
      if (j != root) b.send(buf, bytes, j);
  } else {
    b.recv(buf, bytes, root);
  }
}

void linear_gatherv(Backend& b, const void* in, std::size_t count, void* out, const Counts& counts,
                    const Counts& displs, DType dtype, int root) {
  const std::size_t eb = dtype_bytes(dtype);
  if (b.rank() != root) {
    b.send(in, count * eb, root);
    return;
  }
  if (count > 0) std::memmove(at(out, displs[root], eb), in, count * eb);
  for (int p = 0; p < b.size(); ++p)
    if (p != root) b.recv(at(out, displs[p], eb), counts[p] * eb, p);
}

void linear_scatterv(Backend& b, const void* in, const Counts& counts, const Counts& displs, void* out,
                     std::size_t count, DType dtype, int root) {
  const std::size_t eb = dtype_bytes(dtype);
  if (b.rank() != root) {
    b.recv(out, count * eb, root);
    return;
  }
  for (int p = 0; p < b.size(); ++p)
    if (p != root) b.send(at(in, displs[p], eb), counts[p] * eb, p);
  if (count > 0) std::memmove(out, at(in, displs[root], eb), count * eb);
}

}  // namespace chorus::rt::algorithms
