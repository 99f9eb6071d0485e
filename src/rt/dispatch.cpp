#include "rt/dispatch.h"

#include <cstring>

#include "rt/dtype.h"

namespace chorus::rt {

namespace {

// The backend's own operation for `c` (more than one rank, count > 0 for the uniform forms).
void run_native(Backend& b, const Call& c, ReduceOp wire) {
  switch (c.op) {
    case OpKind::send: return b.user_send(c.in, c.bytes(), c.root);
    case OpKind::recv: return b.user_recv(c.out, c.bytes(), c.root);
    case OpKind::barrier: return b.barrier();
    case OpKind::broadcast: return b.broadcast(c.out, c.count, c.dtype, c.root);
    case OpKind::reduce: return b.reduce(c.in, c.out, c.count, c.dtype, wire, c.root);
    case OpKind::all_reduce: return b.all_reduce(c.in, c.out, c.count, c.dtype, wire);
    case OpKind::reduce_scatter: return b.reduce_scatter(c.in, c.out, c.count, c.dtype, wire);
    case OpKind::all_gather: return b.all_gather(c.in, c.out, c.count, c.dtype);
    case OpKind::gather: return b.gather(c.in, c.out, c.count, c.dtype, c.root);
    case OpKind::scatter: return b.scatter(c.in, c.out, c.count, c.dtype, c.root);
    case OpKind::all_to_all_single: return b.all_to_all_single(c.in, c.out, c.count, c.dtype);
    case OpKind::all_to_all: return b.all_to_all(c.ins, c.send_counts, c.outs, c.recv_counts, c.dtype);
    case OpKind::all_gatherv: return b.all_gatherv(c.in, c.count, c.out, c.recv_counts, c.recv_displs, c.dtype);
    case OpKind::gatherv: return b.gatherv(c.in, c.count, c.out, c.recv_counts, c.recv_displs, c.dtype, c.root);
    case OpKind::scatterv: return b.scatterv(c.in, c.send_counts, c.send_displs, c.out, c.count, c.dtype, c.root);
    case OpKind::all_to_allv:
      return b.all_to_allv(c.in, c.send_counts, c.send_displs, c.out, c.recv_counts, c.recv_displs, c.dtype);
  }
}

}  // namespace

void dispatch(Backend& b, const Call& c, std::size_t algorithm, ReduceOp wire) {
  const OpTraits& t = traits(c.op);
  // Point-to-point messages and the vector forms go to the backend as they are (a message of
  // no data is still a message; a vector form's counts differ by rank).
  if (!t.uniform_count || c.op == OpKind::barrier) {
    if (c.op != OpKind::barrier || b.size() > 1) run_native(b, c, wire);
    return;
  }
  if (c.count == 0) return;
  const int n = b.size();
  if (n == 1) {
    // The one block is the whole buffer; only a rooted output-only call (broadcast) is done.
    if (t.input != Place::none && c.in != c.out) std::memmove(c.out, c.in, c.bytes());
  } else if (algorithm == 0) {
    run_native(b, c, wire);
  } else if (wire == c.reduce_op) {
    b.run_algorithm(algorithm - 1, c);
  } else {
    Call as_sent = c;
    as_sent.reduce_op = wire;
    b.run_algorithm(algorithm - 1, as_sent);
  }
  if (c.reduce_op == ReduceOp::avg && t.reduces && (c.op != OpKind::reduce || b.rank() == c.root))
    divide_by(c.dtype, c.out, c.count, n);
}

}  // namespace chorus::rt
