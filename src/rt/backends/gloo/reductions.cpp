// The reductions: all_reduce (the classic halving-doubling object up to 1 MiB, else Gloo's
// ring; Gloo's ring and bcube also as named algorithms) and reduce.
#include <gloo/allreduce.h>
#include <gloo/reduce.h>

#include <cstring>
#include <string>
#include <vector>

#include "rt/backends/gloo/gloo_backend.h"

namespace chorus::rt::gloo_backend {

void GlooBackend::all_reduce(const void* in, void* out, std::size_t count, DType d, ReduceOp op) {
  // Up to 1 MiB: Gloo's ring splits even a few bytes into 2(n-1) segment exchanges, each
  // with its own send/receive notifications; the classic halving-doubling object needs
  // log2(n) exchanges each way into buffers the peers registered in advance (no rendezvous
  // per message, as Gloo's unbound buffers do).
  if (count * dtype_bytes(d) <= kClassicAllReduceBytes) {
    if (count == 0 || size_ == 1) {
      if (in != out && count > 0) std::memcpy(out, in, count * dtype_bytes(d));
      return;
    }
    guard("all_reduce", [&] { classic_for(count, d, op).run(in, out); });
    return;
  }
  guard("all_reduce", [&] { with_element(d, [&](auto tag) { all_reduce_typed(tag, in, out, count, d, op); }); });
}

std::vector<std::string> GlooBackend::algorithms(CollectiveKind op) const {
  std::vector<std::string> names;
  if (op == CollectiveKind::kAllReduce) names = {"ring", "bcube"};
  for (auto& n : Backend::algorithms(op)) names.push_back(n);
  return names;
}

void GlooBackend::run_algorithm(std::size_t index, const Call& c) {
  if (c.op != CollectiveKind::kAllReduce) return Backend::run_algorithm(index, c);
  if (index >= 2) return Backend::run_algorithm(index - 2, c);
  const auto algorithm =
      index == 0 ? gloo::AllreduceOptions::Algorithm::RING : gloo::AllreduceOptions::Algorithm::BCUBE;
  guard("all_reduce", [&] {
    with_element(c.dtype,
                 [&](auto tag) { all_reduce_typed(tag, c.in, c.out, c.count, c.dtype, c.reduce_op, algorithm); });
  });
}

void GlooBackend::reduce(const void* in, void* out, std::size_t count, DType d, ReduceOp op, int root) {
  guard("reduce", [&] {
    // Gloo's reduce writes the output on every rank: give non-roots a scratch buffer.
    std::vector<char> scratch;
    void* target = out;
    if (rank_ != root) {
      scratch.resize(count * dtype_bytes(d));
      target = scratch.data();
    }
    with_element(d, [&](auto tag) { reduce_typed(tag, in, target, count, d, op, root); });
  });
}

}  // namespace chorus::rt::gloo_backend
