#pragma once
// One operation of the API as a value. Every layer reads this one type: validation
// (validation.h), agreement (a CallSignature is derived from it), submission, the one dispatch
// onto a backend (dispatch.h), a backend's operations (Backend::run, its OperationTable) and its
// named algorithms (Backend::run_algorithm).
// The facts about each operation kind live in one constexpr table, kOpTraits, rather than in
// predicates scattered over the layers.
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "rt/types.h"

namespace chorus::rt {

using Counts = std::vector<std::size_t>;  // one entry per rank, in elements
struct CallCompression;                   // rt/compression/call_compression.h

// Where an operation reads or writes a buffer of `count` elements (or size() * count: wide).
enum class Place : std::uint8_t { kNone, kEveryRank, kRootOnly };

struct OpTraits {
  CollectiveKind op;
  bool collective;         // numbered and agreed on (send and recv are not)
  bool uniform_count;      // every rank passes the same count (the vector forms and p2p do not)
  bool takes_algorithm;    // a named algorithm may follow the backend's name ("mpi:ring")
  bool rooted;             // takes a root
  bool reduces;            // takes a reduce op (avg is divided by the runtime)
  Place input, output;     // where `in` / `out` is read / written (uniform forms)
  bool wide_in, wide_out;  // `in` / `out` holds size() * count elements
  bool fuses;              // tensor fusion packs it into fused buffers (rt/fusion)
  bool compresses;         // has a compressed form (rt/compression: float data; all_reduce with sum or avg)
};

// One row per operation kind, in columns.
// clang-format off
inline constexpr OpTraits kOpTraits[] = {
    // op                              coll   unif   algo   root   reduce input              output             wide_in wide_out fuses  compresses
    {CollectiveKind::kSend,            false, false, false, false, false, Place::kEveryRank, Place::kNone,      false,  false,   false, true},
    {CollectiveKind::kRecv,            false, false, false, false, false, Place::kNone,      Place::kEveryRank, false,  false,   false, true},
    {CollectiveKind::kBarrier,         true,  true,  false, false, false, Place::kNone,      Place::kNone,      false,  false,   false, false},
    {CollectiveKind::kBroadcast,       true,  true,  true,  true,  false, Place::kNone,      Place::kEveryRank, false,  false,   true,  false},
    {CollectiveKind::kReduce,          true,  true,  false, true,  true,  Place::kEveryRank, Place::kRootOnly,  false,  false,   true,  false},
    {CollectiveKind::kAllReduce,       true,  true,  true,  false, true,  Place::kEveryRank, Place::kEveryRank, false,  false,   true,  true},
    {CollectiveKind::kReduceScatter,   true,  true,  true,  false, true,  Place::kEveryRank, Place::kEveryRank, true,   false,   true,  false},
    {CollectiveKind::kAllGather,       true,  true,  true,  false, false, Place::kEveryRank, Place::kEveryRank, false,  true,    true,  true},
    {CollectiveKind::kGather,          true,  true,  false, true,  false, Place::kEveryRank, Place::kRootOnly,  false,  true,    true,  false},
    {CollectiveKind::kScatter,         true,  true,  false, true,  false, Place::kRootOnly,  Place::kEveryRank, true,   false,   true,  false},
    {CollectiveKind::kAllToAll,        true,  false, false, false, false, Place::kNone,      Place::kNone,      false,  false,   false, false},
    {CollectiveKind::kAllToAllSingle,  true,  true,  true,  false, false, Place::kEveryRank, Place::kEveryRank, true,   true,    true,  true},
    {CollectiveKind::kAllGatherv,      true,  false, false, false, false, Place::kEveryRank, Place::kNone,      false,  false,   false, false},
    {CollectiveKind::kGatherv,         true,  false, false, true,  false, Place::kEveryRank, Place::kNone,      false,  false,   false, false},
    {CollectiveKind::kScatterv,        true,  false, false, true,  false, Place::kNone,      Place::kEveryRank, false,  false,   false, false},
    {CollectiveKind::kAllToAllv,       true,  false, false, false, false, Place::kNone,      Place::kNone,      false,  false,   true,  false},
};
// clang-format on

constexpr const OpTraits& traits(CollectiveKind op) { return kOpTraits[static_cast<std::size_t>(op)]; }

// The table is indexed by CollectiveKind: every row in its place, one row per kind.
static_assert(std::size(kOpTraits) == std::size(kAllCollectiveKinds));
static_assert([] {
  for (std::size_t i = 0; i < std::size(kOpTraits); ++i)
    if (static_cast<std::size_t>(kOpTraits[i].op) != i) return false;
  return true;
}());

// The operations that take a named algorithm after the backend name ("mpi:ring";
// Backend::algorithms, docs/runtime-backends.md "(backend, algorithm)").
constexpr bool takes_algorithm(CollectiveKind op) { return traits(op).takes_algorithm; }
inline constexpr std::string_view kAlgorithmOps =
    "all_reduce, broadcast, all_gather, reduce_scatter, all_to_all_single";
static_assert([] {
  std::size_t listed = 1, taking = 0;
  for (char c : kAlgorithmOps) listed += c == ',';
  for (const auto& t : kOpTraits) taking += t.takes_algorithm;
  return listed == taking;
}());

// The lists of the vector forms: all_to_all's buffers (ins[j] to rank j, outs[j] from rank j,
// with send_counts / recv_counts), and the counts and displacements of the v-forms, in elements.
struct CallLists {
  std::vector<const void*> ins{};
  std::vector<void*> outs{};
  Counts send_counts{}, send_displs{}, recv_counts{}, recv_displs{};
};

struct Call {
  CollectiveKind op = CollectiveKind::kBarrier;
  const void* in = nullptr;
  void* out = nullptr;  // a broadcast's buffer
  std::size_t count = 0;
  DType dtype = DType::u8;
  ReduceOp reduce_op = ReduceOp::sum;
  int root = -1;  // rooted operations (kOpTraits' `rooted`)
  int peer = -1;  // send: the destination; recv: the source
  // The vector forms' lists; null for the others, which then cost no allocation and no copy.
  std::shared_ptr<const CallLists> lists{};
  // Set when the call travels compressed (rt/compression/call_compression.h); null otherwise.
  std::shared_ptr<const CallCompression> compression{};
  // The ranks agreed on this call before issuing it: a fused buffer, whose operations, backends
  // and algorithms tensor fusion's cycle agreed on and whose packing follows from them
  // (rt/fusion). The submission path then skips its own agreement round (agreement.h), except
  // in checking mode; a small call still rides the exchange, which performs it. Set only by the
  // layers below the API.
  bool agreed = false;

  // Elements this rank sends (the count the communication log and the tuning table see).
  std::size_t bytes() const { return count * dtype_bytes(dtype); }
};

// One constructor per operation, arguments in the order of the API's functions (runtime.h).
namespace calls {
inline Call send(const void* buf, std::size_t count, DType dtype, int dst) {
  return {.op = CollectiveKind::kSend, .in = buf, .count = count, .dtype = dtype, .peer = dst};
}
inline Call recv(void* buf, std::size_t count, DType dtype, int src) {
  return {.op = CollectiveKind::kRecv, .out = buf, .count = count, .dtype = dtype, .peer = src};
}
inline Call barrier() { return {.op = CollectiveKind::kBarrier}; }
inline Call broadcast(void* buf, std::size_t count, DType dtype, int root) {
  return {.op = CollectiveKind::kBroadcast, .out = buf, .count = count, .dtype = dtype, .root = root};
}
inline Call reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op, int root) {
  return {.op = CollectiveKind::kReduce,
          .in = in,
          .out = out,
          .count = count,
          .dtype = dtype,
          .reduce_op = op,
          .root = root};
}
inline Call all_reduce(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op) {
  return {.op = CollectiveKind::kAllReduce, .in = in, .out = out, .count = count, .dtype = dtype, .reduce_op = op};
}
inline Call reduce_scatter(const void* in, void* out, std::size_t count, DType dtype, ReduceOp op) {
  return {.op = CollectiveKind::kReduceScatter, .in = in, .out = out, .count = count, .dtype = dtype, .reduce_op = op};
}
inline Call all_gather(const void* in, void* out, std::size_t count, DType dtype) {
  return {.op = CollectiveKind::kAllGather, .in = in, .out = out, .count = count, .dtype = dtype};
}
inline Call gather(const void* in, void* out, std::size_t count, DType dtype, int root) {
  return {.op = CollectiveKind::kGather, .in = in, .out = out, .count = count, .dtype = dtype, .root = root};
}
inline Call scatter(const void* in, void* out, std::size_t count, DType dtype, int root) {
  return {.op = CollectiveKind::kScatter, .in = in, .out = out, .count = count, .dtype = dtype, .root = root};
}
inline Call all_to_all_single(const void* in, void* out, std::size_t count, DType dtype) {
  return {.op = CollectiveKind::kAllToAllSingle, .in = in, .out = out, .count = count, .dtype = dtype};
}
inline Call all_to_all(const std::vector<const void*>& ins, const Counts& in_counts, const std::vector<void*>& outs,
                       const Counts& out_counts, DType dtype) {
  return {.op = CollectiveKind::kAllToAll,
          .dtype = dtype,
          .lists = std::make_shared<const CallLists>(
              CallLists{.ins = ins, .outs = outs, .send_counts = in_counts, .recv_counts = out_counts})};
}
inline Call all_gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                        DType dtype) {
  return {.op = CollectiveKind::kAllGatherv,
          .in = in,
          .out = out,
          .count = count,
          .dtype = dtype,
          .lists = std::make_shared<const CallLists>(CallLists{.recv_counts = counts, .recv_displs = displs})};
}
inline Call gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                    DType dtype, int root) {
  return {.op = CollectiveKind::kGatherv,
          .in = in,
          .out = out,
          .count = count,
          .dtype = dtype,
          .root = root,
          .lists = std::make_shared<const CallLists>(CallLists{.recv_counts = counts, .recv_displs = displs})};
}
inline Call scatterv(const void* in, const Counts& counts, const Counts& displs, void* out, std::size_t count,
                     DType dtype, int root) {
  return {.op = CollectiveKind::kScatterv,
          .in = in,
          .out = out,
          .count = count,
          .dtype = dtype,
          .root = root,
          .lists = std::make_shared<const CallLists>(CallLists{.send_counts = counts, .send_displs = displs})};
}
inline Call all_to_allv(const void* in, const Counts& send_counts, const Counts& send_displs, void* out,
                        const Counts& recv_counts, const Counts& recv_displs, DType dtype) {
  return {.op = CollectiveKind::kAllToAllv,
          .in = in,
          .out = out,
          .dtype = dtype,
          .lists = std::make_shared<const CallLists>(CallLists{.send_counts = send_counts,
                                                               .send_displs = send_displs,
                                                               .recv_counts = recv_counts,
                                                               .recv_displs = recv_displs})};
}
}  // namespace calls

}  // namespace chorus::rt
