// Small reductions through "lines": each cache line carries its data and the collective's tag,
// so a reader pays one cache miss per line rather than one for the step counter and one for the
// data (the idea of NCCL's LL128 protocol).
#include <algorithm>
#include <cstring>

#include "rt/dtype.h"
#include "rt/transport/shm/shm_transport.h"

namespace chorus::rt {

using namespace shm;

// The tag of every line is the step this collective counts as, so a reader waits on the line
// itself and finds the data there. The step counter is still bumped (after the lines) for the
// step() of later collectives, and it is what a slow reader sleeps on. Every rank waits for
// every peer's lines even when it wants no result (a reduce's non-root): seeing a peer's tag of
// this collective is what tells the rank that the peer has finished reading the previous
// collective on the other side, which the next collective will overwrite (the invariant of
// phase_). Every line carries the collective's compact signature; a peer's first line is checked
// against ours before any data is read (a peer that opened another collective left its
// signature in that line too). The result is reduced in rank order, (((s0 + s1) + s2) + ...), as
// the slot forms do, so results are bit-identical across ranks and sizes.
void ShmTransport::lines_reduce(const void* in, void* out, std::size_t bytes, DType dtype, ReduceOp reduce_op, int root,
                                OpSignature sig) {
  const std::size_t b = side(0);
  const std::uint32_t tag = publish(sig);
  const std::uint32_t signature = compact(sig);
  ++steps_;
  SmallLine* mine = control(rank_)->lines[b];
  const std::size_t nlines = (bytes + kLineData - 1) / kLineData;
  for (std::size_t i = 0; i < nlines; ++i) {
    std::memcpy(mine[i].data, static_cast<const char*>(in) + i * kLineData, std::min(kLineData, bytes - i * kLineData));
    mine[i].signature = signature;
    mine[i].tag.store(tag, std::memory_order_release);
  }
  control(rank_)->step.store_and_wake(steps_);
  const bool result = root < 0 || root == rank_;
  const std::size_t eb = dtype_bytes(dtype);
  for (std::size_t i = 0; i < (result ? nlines : 1); ++i) {
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) continue;
      const SmallLine& l = control(p)->lines[b][i];
      wait_until([&] { return l.tag.load(std::memory_order_acquire) == tag; }, control(p)->step, p);
      if (i == 0 && l.signature != signature) [[unlikely]]
        throw_disagreement("shm", op(), rank_, sig, p, control(p)->opened[tag & 1], name_algorithm_);
    }
    if (!result) continue;
    const std::size_t n = std::min(kLineData, bytes - i * kLineData) / eb;
    char* o = static_cast<char*>(out) + i * kLineData;
    reduce_into(dtype, reduce_op, o, control(0)->lines[b][i].data, control(1)->lines[b][i].data, n);
    for (int p = 2; p < size_; ++p) reduce_into(dtype, reduce_op, o, o, control(p)->lines[b][i].data, n);
  }
  advance(1);
}

}  // namespace chorus::rt
