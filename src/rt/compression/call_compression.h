#pragma once
// Compression as an option of a call (MCR-DL Sec. V): a Call whose `compression` is set travels
// as zfp blocks under an error bound. The runtime runs it like any other operation, on its
// communicator's lanes, agreed on first (the bound is part of the agreement), in its compressed
// form (compressed_algorithms.h) instead of the backend's own:
//
//   rt::issue("gloo", rt::compressed_call(rt::calls::all_reduce(g, g, n, DType::f32, ReduceOp::avg),
//                                        {Kind::kAbsolute, 1e-4}), /*async_op=*/true);
//
// compressed.h's functions and the Compressor are this, named; the Python module and the torch
// backend build such calls too.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "rt/call.h"
#include "rt/compression/zfp_codec.h"

namespace chorus::rt::compressed {

// What this rank sent, accumulated over calls: raw_bytes is what the same operation would have
// sent uncompressed (its own data: count elements for all_gather and send, the p - 1 blocks for
// other ranks in all_to_all_single, the ring's blocks plus its reduced block in all_reduce);
// wire_bytes what it sent: the compressed blocks plus the 8-byte size messages.
struct Stats {
  std::uint64_t raw_bytes = 0;
  std::uint64_t wire_bytes = 0;
  Stats& operator+=(const Stats& o) {
    raw_bytes += o.raw_bytes;
    wire_bytes += o.wire_bytes;
    return *this;
  }
};

// Running sums of Stats that operations add to from the runtime's lanes while the owner reads
// them (a Compressor's, a process group's).
class StatsTotals {
 public:
  void add(const Stats& s) {
    raw_.fetch_add(s.raw_bytes, std::memory_order_relaxed);
    wire_.fetch_add(s.wire_bytes, std::memory_order_relaxed);
  }
  Stats get() const { return {raw_.load(std::memory_order_relaxed), wire_.load(std::memory_order_relaxed)}; }

 private:
  std::atomic<std::uint64_t> raw_{0}, wire_{0};
};

// The operations that have a compressed form: float data of these kinds only (all_reduce with
// sum or avg).
inline constexpr CollectiveKind kCompressible[] = {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                                                   CollectiveKind::kAllToAllSingle, CollectiveKind::kSend,
                                                   CollectiveKind::kRecv};
constexpr bool has_compressed_form(CollectiveKind op) { return traits(op).compresses; }
// The list and the table's column say the same.
static_assert([] {
  std::size_t n = 0;
  for (const OpTraits& t : kOpTraits) n += t.compresses;
  for (CollectiveKind k : kCompressible)
    if (!traits(k).compresses) return false;
  return n == std::size(kCompressible);
}());

}  // namespace chorus::rt::compressed

namespace chorus::rt {

struct CallCompression {
  compressed::ErrorBound bound;
  // Added to on the lane that runs the call, before its Work completes: the caller's own
  // (read it after the Work), and running sums (read any time). Either may be null.
  compressed::Stats* stats = nullptr;
  compressed::StatsTotals* totals = nullptr;
};

// `call` travelling compressed under `bound`.
inline Call compressed_call(Call call, const compressed::ErrorBound& bound, compressed::Stats* stats = nullptr,
                            compressed::StatsTotals* totals = nullptr) {
  call.compression = std::make_shared<const CallCompression>(CallCompression{bound, stats, totals});
  return call;
}

}  // namespace chorus::rt

namespace chorus::rt {

// Compression as a layer of a communicator's submission path (Runtime::communicator(name,
// layers), rt/communicator_layers.cpp): the operation kinds that travel compressed, each under its
// bound. Communicator::issue applies it to every call first: a call of a kind it names whose data
// has a compressed form (float32 or float64 elements; an all_reduce that sums or averages), not
// compressed already, travels compressed, what it sends added to `totals`; every other call runs
// as it is. Every rank's calls decide alike (kind, dtype, reduce op: the same on every rank).
struct CompressionPolicy {
  std::array<std::optional<compressed::ErrorBound>, std::size(kAllCollectiveKinds)> bounds{};
  mutable compressed::StatsTotals totals;  // what the calls it compressed sent (and would have)

  bool compresses(CollectiveKind op) const { return bounds[static_cast<std::size_t>(op)].has_value(); }
  // Whether `call`'s data has a compressed form.
  static bool compressible(const Call& call) {
    return compressed::has_compressed_form(call.op) && (call.dtype == DType::f32 || call.dtype == DType::f64) &&
           (call.op != CollectiveKind::kAllReduce || call.reduce_op == ReduceOp::sum ||
            call.reduce_op == ReduceOp::avg);
  }
  // `call` as this policy sends it.
  Call apply(Call call) const {
    const auto& bound = bounds[static_cast<std::size_t>(call.op)];
    if (!bound || call.compression || !compressible(call)) return call;
    return compressed_call(std::move(call), *bound, nullptr, &totals);
  }
};

}  // namespace chorus::rt
