// What every backend's operation table starts from, and keeps for the operations its library
// lacks: the generic algorithms of algorithms/ (one file per algorithm), the uniform forms run as
// their vector forms; and the runtime's own named algorithms (`*_p2p`) on every backend.
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "rt/algorithms/algorithms.h"
#include "rt/backend.h"
#include "rt/dtype.h"

namespace chorus::rt {

namespace {

// The generic algorithm of every operation kind, reading its arguments from the Call.
OperationTable make_generic_operations() {
  OperationTable t{};
  using K = CollectiveKind;
  t[index_of(K::kSend)] = [](Backend& b, const Call& c, ReduceOp) { b.send(c.in, c.bytes(), c.peer); };
  t[index_of(K::kRecv)] = [](Backend& b, const Call& c, ReduceOp) { b.recv(c.out, c.bytes(), c.peer); };
  t[index_of(K::kBarrier)] = [](Backend& b, const Call&, ReduceOp) { algorithms::dissemination_barrier(b); };
  t[index_of(K::kBroadcast)] = [](Backend& b, const Call& c, ReduceOp) {
    algorithms::linear_broadcast(b, c.out, c.count, c.dtype, c.root);
  };
  t[index_of(K::kReduce)] = [](Backend& b, const Call& c, ReduceOp op) {
    std::vector<char> tmp(c.bytes());
    algorithms::ring_all_reduce(b, c.in, tmp.data(), c.count, c.dtype, op);
    if (b.rank() == c.root && c.count > 0) std::memcpy(c.out, tmp.data(), tmp.size());
  };
  t[index_of(K::kAllReduce)] = [](Backend& b, const Call& c, ReduceOp op) {
    algorithms::ring_all_reduce(b, c.in, c.out, c.count, c.dtype, op);
  };
  t[index_of(K::kReduceScatter)] = [](Backend& b, const Call& c, ReduceOp op) {
    algorithms::ring_reduce_scatter(b, c.in, c.out, c.count, c.dtype, op);
  };
  t[index_of(K::kAllGather)] = [](Backend& b, const Call& c, ReduceOp) {
    const UniformCounts u(b.size(), c.count);
    algorithms::ring_all_gatherv(b, c.in, c.count, c.out, u.counts, u.displs, c.dtype);
  };
  t[index_of(K::kGather)] = [](Backend& b, const Call& c, ReduceOp) {
    const UniformCounts u(b.size(), c.count);
    algorithms::linear_gatherv(b, c.in, c.count, c.out, u.counts, u.displs, c.dtype, c.root);
  };
  t[index_of(K::kScatter)] = [](Backend& b, const Call& c, ReduceOp) {
    const UniformCounts u(b.size(), c.count);
    algorithms::linear_scatterv(b, c.in, u.counts, u.displs, c.out, c.count, c.dtype, c.root);
  };
  t[index_of(K::kAllToAllSingle)] = [](Backend& b, const Call& c, ReduceOp) {
    const UniformCounts u(b.size(), c.count);
    algorithms::pairwise_all_to_allv(b, c.in, u.counts, u.displs, c.out, u.counts, u.displs, c.dtype);
  };
  t[index_of(K::kAllToAll)] = [](Backend& b, const Call& c, ReduceOp) {
    const CallLists& l = *c.lists;
    algorithms::pairwise_all_to_all(b, l.ins, l.send_counts, l.outs, l.recv_counts, c.dtype);
  };
  t[index_of(K::kAllGatherv)] = [](Backend& b, const Call& c, ReduceOp) {
    algorithms::ring_all_gatherv(b, c.in, c.count, c.out, c.lists->recv_counts, c.lists->recv_displs, c.dtype);
  };
  t[index_of(K::kGatherv)] = [](Backend& b, const Call& c, ReduceOp) {
    algorithms::linear_gatherv(b, c.in, c.count, c.out, c.lists->recv_counts, c.lists->recv_displs, c.dtype, c.root);
  };
  t[index_of(K::kScatterv)] = [](Backend& b, const Call& c, ReduceOp) {
    algorithms::linear_scatterv(b, c.in, c.lists->send_counts, c.lists->send_displs, c.out, c.count, c.dtype, c.root);
  };
  t[index_of(K::kAllToAllv)] = [](Backend& b, const Call& c, ReduceOp) {
    const CallLists& l = *c.lists;
    algorithms::pairwise_all_to_allv(b, c.in, l.send_counts, l.send_displs, c.out, l.recv_counts, l.recv_displs,
                                     c.dtype);
  };
  for (const Operation op : t)
    if (op == nullptr) throw std::logic_error("generic_operations: a kind without an operation");
  return t;
}

}  // namespace

const OperationTable& generic_operations() {
  static const OperationTable table = make_generic_operations();
  return table;
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
  const UniformCounts u(size(), c.count);
  const Counts& counts = u.counts;
  const Counts& displs = u.displs;
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

}  // namespace chorus::rt
