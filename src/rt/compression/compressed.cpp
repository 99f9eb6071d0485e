// The compressed collectives, blocking: each the runtime's operation with compression as its
// option (call_compression.h); see compressed.h for the guarantees.
#include "rt/compression/compressed.h"

#include "rt/runtime.h"

namespace chorus::rt::compressed {

void all_gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
                const ErrorBound& bound, Stats* stats) {
  rt::issue(backend, compressed_call(calls::all_gather(in, out, count, dtype), bound, stats));
}

void all_to_all_single(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
                       const ErrorBound& bound, Stats* stats) {
  rt::issue(backend, compressed_call(calls::all_to_all_single(in, out, count, dtype), bound, stats));
}

void send(std::string_view backend, const void* buf, std::size_t count, DType dtype, int dst, const ErrorBound& bound,
          Stats* stats) {
  rt::issue(backend, compressed_call(calls::send(buf, count, dtype, dst), bound, stats));
}

void recv(std::string_view backend, void* buf, std::size_t count, DType dtype, int src, const ErrorBound& bound,
          Stats* stats) {
  rt::issue(backend, compressed_call(calls::recv(buf, count, dtype, src), bound, stats));
}

void all_reduce(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                const ErrorBound& bound, Stats* stats) {
  rt::issue(backend, compressed_call(calls::all_reduce(in, out, count, dtype, op), bound, stats));
}

}  // namespace chorus::rt::compressed
