#include "rt/dispatch.h"

#include <cstring>

#include "rt/dtype.h"

namespace chorus::rt::detail {

void run_alone(const Call& c) {
  // A broadcast has nothing to do.
  if (traits(c.op).input != Place::kNone && c.in != c.out) std::memmove(c.out, c.in, c.bytes());
}

void run_algorithm(Backend& b, const Call& c, std::size_t algorithm, ReduceOp wire) {
  if (b.size() == 1) return run_alone(c);
  if (wire == c.reduce_op) return b.run_algorithm(algorithm - 1, c);
  Call as_sent = c;
  as_sent.reduce_op = wire;
  b.run_algorithm(algorithm - 1, as_sent);
}

void finish_avg(Backend& b, const Call& c) {
  if (c.op != CollectiveKind::kReduce || b.rank() == c.root) divide_by(c.dtype, c.out, c.count, b.size());
}

}  // namespace chorus::rt::detail
