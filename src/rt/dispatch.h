#pragma once
// The one place an operation meets a backend: a Call goes to the backend's operation for its
// kind (Backend::run, the backend's OperationTable) or to its named algorithm, the same shape
// for every operation.
#include <cstddef>

#include "rt/backend.h"
#include "rt/call.h"
#include "rt/compression/compressed_algorithms.h"

namespace chorus::rt {

// Runs `call` on `backend`: with `algorithm` 0 the backend's own operation, else its named
// algorithm `algorithm - 1` (Backend::algorithms); `wire` is the reduce op the backend gets
// (avg as sum unless Backend::takes_avg). A uniform call of no data moves nothing (a backend that
// agrees on its data path still compares it with its peers') and a world of one copies locally; avg is divided afterwards. Inline: it is every operation's path.
namespace detail {
// A uniform call in a world of one: the one block is the whole buffer, copied locally.
void run_alone(const Call& c);
void run_algorithm(Backend& b, const Call& c, std::size_t algorithm, ReduceOp wire);
void finish_avg(Backend& b, const Call& c);
}  // namespace detail

inline void dispatch(Backend& b, const Call& c, std::size_t algorithm, ReduceOp wire) {
  const OpTraits& t = traits(c.op);
  if (c.compression) [[unlikely]]
    return compressed::run(b, c);  // avg divided there
  // Point-to-point messages and the vector forms go to the backend as they are (a message of
  // no data is still a message; a vector form's counts differ by rank).
  if (!t.uniform_count || c.op == CollectiveKind::kBarrier) [[unlikely]] {
    if (c.op != CollectiveKind::kBarrier || b.size() > 1) b.run(c, wire);
    return;
  }
  if (c.count == 0) [[unlikely]] {
    if (b.size() > 1 && b.agrees_on_data_path()) b.agree_empty(c);  // shm: ranks still compare calls
    return;
  }
  if (algorithm != 0) [[unlikely]] {
    detail::run_algorithm(b, c, algorithm, wire);
  } else if (b.size() > 1) [[likely]] {
    b.run(c, wire);
  } else {
    detail::run_alone(c);
  }
  if (c.reduce_op == ReduceOp::avg && t.reduces) detail::finish_avg(b, c);
}

}  // namespace chorus::rt
