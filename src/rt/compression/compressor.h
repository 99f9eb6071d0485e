#pragma once
// Compressed collectives that overlap with the program (rt/compression/compressed.h runs them
// when called, on the calling thread).
//
//   chorus::rt::compressed::Compressor cz("gloo");                    // collective
//   Work w = cz.all_reduce(g.data(), g.data(), g.size(), DType::f32, ReduceOp::avg, {Kind::kAbsolute, 1e-4});
//   ...                                                              // the program goes on
//   w.wait();
//
// Each call returns a Work at once; worker threads run the calls as the blocking compressed
// operations, on a group of its own (a duplicate of `backend` made with rt::split), so their
// messages never interleave with the program's own operations on `backend`. Collectives run on
// one worker in the order they were called (every rank makes the same calls in the same order,
// as for the blocking forms); sends on a second and receives on a third, each in call order,
// as the runtime's own send and receive lanes: a queued send does not wait for a receive or a
// collective queued before it, so the usual exchange (every rank sends, then receives) does not
// wait for ever. Buffers are the runtime's until the Work completes. Errors (bad arguments
// included) are in the Works.
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
  // compressed::send / recv, asynchronous, on the send and receive workers. `stats` of a
  // receive stays untouched (a receive sends nothing).
  Work send(const void* buf, std::size_t count, DType dtype, int dst, const ErrorBound& bound, Stats* stats = nullptr);
  Work recv(void* buf, std::size_t count, DType dtype, int src, const ErrorBound& bound, Stats* stats = nullptr);

  // Any blocking compressed operation, queued like the above: `call(group, stats)` runs on the
  // lane's worker with the Compressor's group as its backend (the torch backend passes its own
  // calls).
  enum class LaneKind { kCollective = 0, kSend = 1, kRecv = 2 };
  Work run(std::string what, std::function<void(const std::string& group, Stats* stats)> call, Stats* stats = nullptr,
           LaneKind lane = LaneKind::kCollective);

  Stats stats() const;
  const std::string& group() const;  // the group its operations run on

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chorus::rt::compressed
