#pragma once
// A backend's OperationTable (backend.h) from the methods its library implements. Each backend
// names the kinds it runs itself; the others keep the generic algorithms. The one place where a
// Call is read into a backend method's arguments, the same for every backend: own<B, kind>.
#include "rt/backend.h"

namespace chorus::rt {

// Runs `c` on backend B's own method for `kind`, which takes the arguments of the API's
// function of that name (runtime.h; a broadcast's buffer is `out`, the application's messages
// are user_send and user_recv).
template <typename B, CollectiveKind kind>
void own(Backend& backend, const Call& c, ReduceOp op) {
  using K = CollectiveKind;
  B& b = static_cast<B&>(backend);
  if constexpr (kind == K::kSend) {
    b.user_send(c.in, c.bytes(), c.peer);
  } else if constexpr (kind == K::kRecv) {
    b.user_recv(c.out, c.bytes(), c.peer);
  } else if constexpr (kind == K::kBarrier) {
    b.barrier();
  } else if constexpr (kind == K::kBroadcast) {
    b.broadcast(c.out, c.count, c.dtype, c.root);
  } else if constexpr (kind == K::kReduce) {
    b.reduce(c.in, c.out, c.count, c.dtype, op, c.root);
  } else if constexpr (kind == K::kAllReduce) {
    b.all_reduce(c.in, c.out, c.count, c.dtype, op);
  } else if constexpr (kind == K::kReduceScatter) {
    b.reduce_scatter(c.in, c.out, c.count, c.dtype, op);
  } else if constexpr (kind == K::kAllGather) {
    b.all_gather(c.in, c.out, c.count, c.dtype);
  } else if constexpr (kind == K::kGather) {
    b.gather(c.in, c.out, c.count, c.dtype, c.root);
  } else if constexpr (kind == K::kScatter) {
    b.scatter(c.in, c.out, c.count, c.dtype, c.root);
  } else if constexpr (kind == K::kAllToAllSingle) {
    b.all_to_all_single(c.in, c.out, c.count, c.dtype);
  } else if constexpr (kind == K::kAllToAll) {
    b.all_to_all(c.lists->ins, c.lists->send_counts, c.lists->outs, c.lists->recv_counts, c.dtype);
  } else if constexpr (kind == K::kAllGatherv) {
    b.all_gatherv(c.in, c.count, c.out, c.lists->recv_counts, c.lists->recv_displs, c.dtype);
  } else if constexpr (kind == K::kGatherv) {
    b.gatherv(c.in, c.count, c.out, c.lists->recv_counts, c.lists->recv_displs, c.dtype, c.root);
  } else if constexpr (kind == K::kScatterv) {
    b.scatterv(c.in, c.lists->send_counts, c.lists->send_displs, c.out, c.count, c.dtype, c.root);
  } else {
    static_assert(kind == K::kAllToAllv);
    b.all_to_allv(c.in, c.lists->send_counts, c.lists->send_displs, c.out, c.lists->recv_counts, c.lists->recv_displs,
                  c.dtype);
  }
}

// The generic operations, with `kinds` on B's own methods.
template <typename B, CollectiveKind... kinds>
OperationTable own_operations() {
  OperationTable table = generic_operations();
  ((table[index_of(kinds)] = &own<B, kinds>), ...);
  return table;
}

}  // namespace chorus::rt
