#include "rt/dispatch.h"

#include <cstring>

#include "rt/dtype.h"

namespace chorus::rt::detail {

void run_native(Backend& b, const Call& c, ReduceOp wire) {
  if (b.size() == 1 && traits(c.op).uniform_count) {
    // A world of one: the one block is the whole buffer (a broadcast has nothing to do).
    if (traits(c.op).input != Place::kNone && c.in != c.out) std::memmove(c.out, c.in, c.bytes());
    return;
  }
  switch (c.op) {
    case CollectiveKind::kSend:
      return b.user_send(c.in, c.bytes(), c.peer);
    case CollectiveKind::kRecv:
      return b.user_recv(c.out, c.bytes(), c.peer);
    case CollectiveKind::kBarrier:
      return b.barrier();
    case CollectiveKind::kBroadcast:
      return b.broadcast(c.out, c.count, c.dtype, c.root);
    case CollectiveKind::kReduce:
      return b.reduce(c.in, c.out, c.count, c.dtype, wire, c.root);
    case CollectiveKind::kAllReduce:
      return b.all_reduce(c.in, c.out, c.count, c.dtype, wire);
    case CollectiveKind::kReduceScatter:
      return b.reduce_scatter(c.in, c.out, c.count, c.dtype, wire);
    case CollectiveKind::kAllGather:
      return b.all_gather(c.in, c.out, c.count, c.dtype);
    case CollectiveKind::kGather:
      return b.gather(c.in, c.out, c.count, c.dtype, c.root);
    case CollectiveKind::kScatter:
      return b.scatter(c.in, c.out, c.count, c.dtype, c.root);
    case CollectiveKind::kAllToAllSingle:
      return b.all_to_all_single(c.in, c.out, c.count, c.dtype);
    case CollectiveKind::kAllToAll:
      return b.all_to_all(c.lists->ins, c.lists->send_counts, c.lists->outs, c.lists->recv_counts, c.dtype);
    case CollectiveKind::kAllGatherv:
      return b.all_gatherv(c.in, c.count, c.out, c.lists->recv_counts, c.lists->recv_displs, c.dtype);
    case CollectiveKind::kGatherv:
      return b.gatherv(c.in, c.count, c.out, c.lists->recv_counts, c.lists->recv_displs, c.dtype, c.root);
    case CollectiveKind::kScatterv:
      return b.scatterv(c.in, c.lists->send_counts, c.lists->send_displs, c.out, c.count, c.dtype, c.root);
    case CollectiveKind::kAllToAllv:
      return b.all_to_allv(c.in, c.lists->send_counts, c.lists->send_displs, c.out, c.lists->recv_counts,
                           c.lists->recv_displs, c.dtype);
  }
}

void run_algorithm(Backend& b, const Call& c, std::size_t algorithm, ReduceOp wire) {
  if (b.size() == 1) return run_native(b, c, wire);
  if (wire == c.reduce_op) return b.run_algorithm(algorithm - 1, c);
  Call as_sent = c;
  as_sent.reduce_op = wire;
  b.run_algorithm(algorithm - 1, as_sent);
}

void finish_avg(Backend& b, const Call& c) {
  if (c.op != CollectiveKind::kReduce || b.rank() == c.root) divide_by(c.dtype, c.out, c.count, b.size());
}

}  // namespace chorus::rt::detail
