#pragma once
// Compressed collectives that overlap with the program (compressed.h's run when called, on the
// calling thread).
//
//   chorus::rt::compressed::Compressor cz("gloo");                    // collective
//   Work w = cz.all_reduce(g.data(), g.data(), g.size(), DType::f32, ReduceOp::avg, {Kind::kAbsolute, 1e-4});
//   ...                                                              // the program goes on
//   w.wait();
//
// Each call is the runtime's asynchronous operation with compression as its option
// (call_compression.h), issued on a group of the Compressor's own (a duplicate of `backend` made
// with rt::split), so that its messages never interleave with the program's own operations on
// `backend`. It runs on that group's lanes as any operation does: collectives in the order they
// were called (every rank makes the same calls in the same order, as for the blocking forms),
// sends and receives each on their own lane, so a queued send does not wait for a receive or a
// collective queued before it. Buffers are the runtime's until the Work completes. Bad arguments
// throw at the call, as for the runtime's operations; failures are in the Works.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "rt/compression/compressed.h"
#include "rt/runtime.h"
#include "rt/types.h"
#include "rt/work.h"

namespace chorus::rt::compressed {

class Compressor {
 public:
  // Collective over `runtime`'s world, like rt::Fusion: every rank constructs its Compressors on
  // its runtime in the same order, with the same backend (an initialised backend, not "auto"),
  // while no other operation of that runtime is being issued (it makes a group). The runtime
  // must outlive the Compressor.
  Compressor(Runtime& runtime, std::string_view backend);
  // The same on the process's default runtime (rt::init's).
  explicit Compressor(std::string_view backend);
  // Waits for every call made so far. Destroy before its runtime ends (rt::finalize()).
  ~Compressor();
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;

  // The collectives of compressed.h, asynchronous. `stats`, when given, is added to before the
  // Work completes; stats() sums every call.
  Work all_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, const ErrorBound& bound,
                  Stats* stats = nullptr);
  Work all_gather(const void* in, void* out, std::size_t count, DType dtype, const ErrorBound& bound,
                  Stats* stats = nullptr);
  Work all_to_all_single(const void* in, void* out, std::size_t count, DType dtype, const ErrorBound& bound,
                         Stats* stats = nullptr);
  // compressed::send / recv, asynchronous, on the send and receive lanes. `stats` of a
  // receive stays untouched (a receive sends nothing).
  Work send(const void* buf, std::size_t count, DType dtype, int dst, const ErrorBound& bound, Stats* stats = nullptr);
  Work recv(void* buf, std::size_t count, DType dtype, int src, const ErrorBound& bound, Stats* stats = nullptr);

  // Any call with a compressed form (call_compression.h: kCompressible), issued like the above.
  Work issue(Call call, const ErrorBound& bound, Stats* stats = nullptr);

  Stats stats() const;
  const std::string& group() const;  // the group its operations run on

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chorus::rt::compressed
