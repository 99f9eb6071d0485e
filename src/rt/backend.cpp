// What every backend inherits for the operations its library lacks: the generic algorithms of
// algorithms/ (one file per algorithm), and the uniform forms expressed as their vector forms.
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "rt/algorithms/algorithms.h"
#include "rt/backend.h"
#include "rt/dtype.h"

namespace chorus::rt {

namespace {

// Counts and displacements of `count` elements from every rank, packed in rank order.
void uniform(int n, std::size_t count, Counts& counts, Counts& displs) {
  counts.assign(static_cast<std::size_t>(n), count);
  displs.resize(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) displs[j] = count * static_cast<std::size_t>(j);
}

}  // namespace

void Backend::barrier() { algorithms::dissemination_barrier(*this); }

void Backend::broadcast(void* buf, std::size_t count, DType dtype, int root) {
  algorithms::linear_broadcast(*this, buf, count, dtype, root);
}

void Backend::reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root) {
  std::vector<char> tmp(count * dtype_bytes(dtype));
  all_reduce(in, tmp.data(), count, dtype, op);
  if (rank() == root && count > 0) std::memcpy(out, tmp.data(), tmp.size());
}

void Backend::all_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op) {
  algorithms::ring_all_reduce(*this, in, out, count, dtype, op);
}

std::vector<std::string> Backend::algorithms(CollectiveKind op) const {
  if (!native(op)) return {};
  switch (op) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return {"ring_p2p"};
    case CollectiveKind::kBroadcast:
      return {"linear_p2p"};
    case CollectiveKind::kAllToAllSingle:
      return {"pairwise_p2p"};
    default:
      return {};
  }
}

void Backend::run_algorithm(std::size_t index, const Call& c) {
  if (index != 0 || algorithms(c.op).empty())
    throw std::logic_error("run_algorithm: " + std::string(to_string(c.op)) + " has no algorithm " +
                           std::to_string(index));
  Counts counts, displs;
  uniform(size(), c.count, counts, displs);
  switch (c.op) {
    case CollectiveKind::kAllReduce:
      return algorithms::ring_all_reduce(*this, c.in, c.out, c.count, c.dtype, c.reduce_op);
    case CollectiveKind::kReduceScatter:
      return algorithms::ring_reduce_scatter(*this, c.in, c.out, c.count, c.dtype, c.reduce_op);
    case CollectiveKind::kAllGather:
      return algorithms::ring_all_gatherv(*this, c.in, c.count, c.out, counts, displs, c.dtype);
    case CollectiveKind::kBroadcast:
      return algorithms::linear_broadcast(*this, c.out, c.count, c.dtype, c.root);
    case CollectiveKind::kAllToAllSingle:
      return algorithms::pairwise_all_to_allv(*this, c.in, counts, displs, c.out, counts, displs, c.dtype);
    default:
      throw std::logic_error("run_algorithm: " + std::string(to_string(c.op)) + " takes no algorithm");
  }
}

void Backend::reduce_scatter(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op) {
  algorithms::ring_reduce_scatter(*this, in, out, count, dtype, op);
}

void Backend::all_gather(const void* in, void* out, std::size_t count, DType dtype) {
  Counts counts, displs;
  uniform(size(), count, counts, displs);
  all_gatherv(in, count, out, counts, displs, dtype);
}

void Backend::gather(const void* in, void* out, std::size_t count, DType dtype, int root) {
  Counts counts, displs;
  uniform(size(), count, counts, displs);
  gatherv(in, count, out, counts, displs, dtype, root);
}

void Backend::scatter(const void* in, void* out, std::size_t count, DType dtype, int root) {
  Counts counts, displs;
  uniform(size(), count, counts, displs);
  scatterv(in, counts, displs, out, count, dtype, root);
}

void Backend::all_to_all_single(const void* in, void* out, std::size_t count, DType dtype) {
  Counts counts, displs;
  uniform(size(), count, counts, displs);
  all_to_allv(in, counts, displs, out, counts, displs, dtype);
}

void Backend::all_to_all(const std::vector<const void*>& ins, const Counts& in_counts, const std::vector<void*>& outs,
                         const Counts& out_counts, DType dtype) {
  algorithms::pairwise_all_to_all(*this, ins, in_counts, outs, out_counts, dtype);
}

void Backend::all_gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                          DType dtype) {
  algorithms::ring_all_gatherv(*this, in, count, out, counts, displs, dtype);
}

void Backend::gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                      DType dtype, int root) {
  algorithms::linear_gatherv(*this, in, count, out, counts, displs, dtype, root);
}

void Backend::scatterv(const void* in, const Counts& counts, const Counts& displs, void* out, std::size_t count,
                       DType dtype, int root) {
  algorithms::linear_scatterv(*this, in, counts, displs, out, count, dtype, root);
}

void Backend::all_to_allv(const void* in, const Counts& send_counts, const Counts& send_displs, void* out,
                          const Counts& recv_counts, const Counts& recv_displs, DType dtype) {
  algorithms::pairwise_all_to_allv(*this, in, send_counts, send_displs, out, recv_counts, recv_displs, dtype);
}

}  // namespace chorus::rt
