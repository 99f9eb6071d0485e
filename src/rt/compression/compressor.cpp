#include "rt/compression/compressor.h"

#include <fmt/format.h>

#include "core/error.h"
#include "rt/runtime_instance.h"

namespace chorus::rt::compressed {

struct Compressor::Impl {
  Runtime* runtime = nullptr;
  std::string group;
  Communicator comm;  // the group, resolved once
  StatsTotals totals;
};

Compressor::Compressor(std::string_view backend) : Compressor(default_runtime("Compressor"), backend) {}

Compressor::Compressor(Runtime& runtime, std::string_view backend) : impl_(std::make_unique<Impl>()) {
  if (backend == "auto")
    throw InputError("Compressor",
                     "give an initialised backend, not auto (a Compressor's operations run on one group)");
  impl_->runtime = &runtime;
  impl_->group = fmt::format("chorus-compressor{}/{}", runtime.next_instance("compressor"), backend);
  runtime.split(impl_->group, backend, 0, runtime.rank(backend));
  impl_->comm = runtime.communicator(impl_->group);
}

Compressor::~Compressor() {
  // The calls hold pointers to the totals: wait for them (their errors are in their Works).
  try {
    if (impl_->comm.alive()) impl_->runtime->synchronize({impl_->group});
  } catch (...) {  // a destructor must not throw
  }
}

Work Compressor::issue(Call call, const ErrorBound& bound, Stats* stats) {
  return impl_->comm.issue(compressed_call(std::move(call), bound, stats, &impl_->totals), true);
}

Work Compressor::all_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                            const ErrorBound& bound, Stats* stats) {
  return issue(calls::all_reduce(in, out, count, dtype, op), bound, stats);
}

Work Compressor::all_gather(const void* in, void* out, std::size_t count, DType dtype, const ErrorBound& bound,
                            Stats* stats) {
  return issue(calls::all_gather(in, out, count, dtype), bound, stats);
}

Work Compressor::all_to_all_single(const void* in, void* out, std::size_t count, DType dtype, const ErrorBound& bound,
                                   Stats* stats) {
  return issue(calls::all_to_all_single(in, out, count, dtype), bound, stats);
}

Work Compressor::send(const void* buf, std::size_t count, DType dtype, int dst, const ErrorBound& bound, Stats* stats) {
  return issue(calls::send(buf, count, dtype, dst), bound, stats);
}

Work Compressor::recv(void* buf, std::size_t count, DType dtype, int src, const ErrorBound& bound, Stats* stats) {
  return issue(calls::recv(buf, count, dtype, src), bound, stats);
}

Stats Compressor::stats() const { return impl_->totals.get(); }

const std::string& Compressor::group() const { return impl_->group; }

}  // namespace chorus::rt::compressed
