#pragma once
// Compressed collectives that overlap with the program (rt/compression/compressed.h runs them
// when called, on the calling thread).
//
//   chorus::rt::compressed::Compressor cz("gloo");                    // collective
//   Work w = cz.all_reduce(g.data(), g.data(), g.size(), DType::f32, ReduceOp::avg, {Kind::absolute, 1e-4});
//   ...                                                              // the program goes on
//   w.wait();
//
// Each call returns a Work at once; one worker thread runs the calls, in the order they were
// made, as the blocking compressed operations, on a group of its own (a duplicate of `backend`
// made with rt::split). So their messages never interleave with the program's own operations
// on `backend`, and every rank runs them in the same order: ranks make the same calls in the
// same order, as for the blocking forms. Buffers are the runtime's until the Work completes.
// Errors (bad arguments included) are in the Works.
//
// Collectives only: compressed send / recv stay blocking (compressed.h). Their order across
// ranks is the program's, not one all ranks share, so one worker running them in turn could
// wait forever where isend / irecv would not (rank 0 sends a large block while rank 1, first,
// waits in a collective).
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "rt/compression/compressed.h"
#include "rt/types.h"
#include "rt/work.h"

namespace chorus::rt::compressed {

class Compressor {
 public:
  // Collective over the world, like rt::Fusion: every rank constructs its Compressors in the same
  // order, with the same backend (an initialised backend, not "auto"), while no other operation
  // of the process is being issued (it makes a group).
  explicit Compressor(std::string_view backend);
  // Waits for every call made so far, then stops the worker. Destroy before rt::finalize().
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

  // Any blocking compressed collective, queued like the above: `call(group, stats)` runs on the
  // worker with the Compressor's group as its backend (the torch backend passes its own calls).
  Work run(std::string what, std::function<void(const std::string& group, Stats* stats)> call, Stats* stats = nullptr);

  Stats stats() const;
  const std::string& group() const;  // the group its operations run on

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chorus::rt::compressed
