#pragma once
// Agreement without checking mode: ranks that disagree on a call fail together, with a CommError
// naming both calls, instead of corrupting each other. What every backend's ranks compare is an
// OpSignature, and the errors are worded alike on every backend:
//   shm  carries the signatures on its data path: every collective publishes its signature
//        where its peers look anyway at its first synchronisation (beside the step counter, and
//        in a small all-reduce's first line), and point-to-point messages carry their size;
//   gloo and mpi cannot add a header to their libraries' messages, so the runtime exchanges a
//        32-byte CallDigest per collective before the call (rt/agreement.h), and point-to-point
//        messages announce their size (gloo: a header message; mpi: the receiver probes).
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "rt/types.h"

namespace chorus::rt {

// Lives in shm's shared segment and in the digests: plain data, one layout in every rank.
struct OpSignature {
  std::uint32_t sequence = 0;  // collectives this backend ran before this one
  CollectiveKind op = CollectiveKind::kBarrier;
  DType dtype = DType::u8;
  ReduceOp reduce_op = ReduceOp::sum;  // sum unless a reduction
  std::uint8_t vector_form = 0;        // `bytes` are this rank's own block (all_gatherv) or 0 (exchanges)
  std::int32_t root = -1;
  // The algorithm the call runs with: 0 the backend's own choice, 1 + the index of a named one
  // (Backend::algorithms), kCompressedAlgorithm its compressed form. It decides which messages the
  // call sends (and whether it rides inside the agreement exchange), so ranks must agree on it.
  std::uint16_t algorithm = 0;
  std::uint64_t bytes = 0;
};
inline constexpr std::uint16_t kCompressedAlgorithm = 0xFFFF;

// The signature in 32 bits, exact for every call of at most 448 bytes (the small all-reduces whose
// lines carry it) and distinct from any larger one; of the algorithm it keeps whether it is the
// backend's own (the only one the lines run).
std::uint32_t compact(const OpSignature& s);

// Whether `peer` agrees with `mine`, `expected_bytes` being what this rank expects the peer's
// `bytes` to be (its own, but the peer's block for all_gatherv).
bool agrees(const OpSignature& mine, const OpSignature& peer, std::uint64_t expected_bytes);

// "all_reduce of 8 f32 (sum)", "broadcast of 2097152 u8 from root 0".
std::string describe(const OpSignature& s);

// Names an OpSignature::algorithm of an operation ("the default algorithm", "algorithm
// gloo:ring_p2p": describe_algorithm, rt/checking.h).
using AlgorithmNamer = std::function<std::string(CollectiveKind, std::uint16_t)>;

// The collective `what` of `backend` on rank `me` met rank `peer`'s different call; `name`
// names the algorithms when the two differ in theirs (unset: "algorithm #1").
[[noreturn]] void throw_disagreement(std::string_view backend, std::string_view what, int me, const OpSignature& mine,
                                     int peer, const OpSignature& theirs, const AlgorithmNamer& name = nullptr);

// A receive (`what`) of `buffer` bytes on `me` met rank `src`'s message of `message` bytes.
[[noreturn]] void throw_receive_size_mismatch(std::string_view backend, std::string_view what, int me, int src,
                                              std::uint64_t buffer, std::uint64_t message);
// The sender's side: rank `dst` refused its message of `message` bytes into `buffer` bytes.
[[noreturn]] void throw_send_refused(std::string_view backend, std::string_view what, int me, int dst,
                                     std::uint64_t buffer, std::uint64_t message);

}  // namespace chorus::rt
