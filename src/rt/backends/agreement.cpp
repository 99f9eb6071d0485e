#include "rt/backends/agreement.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "rt/backends/backends.h"
#include "rt/errors.h"

namespace chorus::rt {

std::string gone_peer(const std::function<std::string(int)>& failure_of, int rank, long pid) {
  const std::string why = failure_of ? failure_of(rank) : std::string();
  if (why.empty()) return fmt::format("rank {} (pid {}) died", rank, pid);
  return fmt::format("rank {} (pid {}) ended after its own failure: {}", rank, pid, why);
}

static_assert(sizeof(OpSignature) == 24, "two signatures and the step counter share a cache line");
static_assert(std::size(kAllCollectiveKinds) <= 16 && std::size(kAllDTypes) <= 8 && std::size(kAllReduceOps) <= 7,
              "compact() packs them into 4, 3 and 3 bits (the reduce op's 7: a named algorithm)");

std::uint32_t compact(const OpSignature& s) {
  // 4 + 3 + 3 bits of kinds, 13 of root + 1 (roots are < 4096), 9 of bytes (448 at most on the
  // lines; anything larger reads as 511). A named algorithm takes the reduce op's place as 7 (the
  // ops are 0-4): the lines run only the backend's own, and a peer that opened another call with
  // a named one must not pass for it; two named ones compare their whole signatures.
  const auto bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(s.bytes, 511));
  const std::uint32_t reduction = s.algorithm != 0 ? 7U : static_cast<std::uint32_t>(s.reduce_op);
  return static_cast<std::uint32_t>(s.op) | static_cast<std::uint32_t>(s.dtype) << 4 | reduction << 7 |
         static_cast<std::uint32_t>(s.root + 1) << 10 | bytes << 23;
}

bool agrees(const OpSignature& mine, const OpSignature& peer, std::uint64_t expected_bytes) {
  return mine.sequence == peer.sequence && mine.op == peer.op && mine.dtype == peer.dtype &&
         mine.reduce_op == peer.reduce_op && mine.vector_form == peer.vector_form && mine.root == peer.root &&
         mine.algorithm == peer.algorithm && peer.bytes == expected_bytes;
}

std::string describe(const OpSignature& s) {
  const std::string op(to_string(s.op));
  if (s.op == CollectiveKind::kBarrier) return op;
  const std::size_t eb = dtype_bytes(s.dtype);
  const std::string data = s.bytes % eb == 0 ? fmt::format("{} {}", s.bytes / eb, to_string(s.dtype))
                                             : fmt::format("{} bytes of {}", s.bytes, to_string(s.dtype));
  const std::string reduction = fmt::format(" ({})", to_string(s.reduce_op));
  switch (s.op) {
    case CollectiveKind::kBroadcast:
      return fmt::format("{} of {} from root {}", op, data, s.root);
    case CollectiveKind::kReduce:
      return fmt::format("{} of {}{} to root {}", op, data, reduction, s.root);
    case CollectiveKind::kAllReduce:
      return fmt::format("{} of {}{}", op, data, reduction);
    case CollectiveKind::kReduceScatter:
      return fmt::format("{} of {} per rank{}", op, data, reduction);
    case CollectiveKind::kAllGather:
      return fmt::format("{} of {} per rank", op, data);
    case CollectiveKind::kAllGatherv:
      return fmt::format("{} giving {}", op, data);
    case CollectiveKind::kAllToAllSingle:
      if (s.bytes > 0) return fmt::format("{} of {} per rank", op, data);
      break;
    case CollectiveKind::kGather:
      if (s.bytes > 0) return fmt::format("{} of {} per rank to root {}", op, data, s.root);
      break;
    case CollectiveKind::kScatter:
      if (s.bytes > 0) return fmt::format("{} of {} per rank from root {}", op, data, s.root);
      break;
    default:
      break;
  }
  // The exchanges whose byte counts are checked pair by pair (shm's signatures leave them out)
  return s.root >= 0 ? fmt::format("{} of {} (root {})", op, to_string(s.dtype), s.root)
                     : fmt::format("{} of {}", op, to_string(s.dtype));
}

void throw_disagreement(std::string_view backend, std::string_view what, int me, const OpSignature& mine, int peer,
                        const OpSignature& theirs, const AlgorithmNamer& name) {
  std::string msg = fmt::format("{} {} on rank {}: ranks disagree: rank {} called {}, rank {} {}", backend, what, me,
                                me, describe(mine), peer, describe(theirs));
  if (mine.algorithm != theirs.algorithm) {
    const auto algorithm = [&](const OpSignature& s) {
      return name ? name(s.op, s.algorithm) : fmt::format("algorithm #{}", s.algorithm);
    };
    const std::string theirs_call = describe(theirs) == describe(mine) ? "" : describe(theirs) + " ";
    msg = fmt::format("{} {} on rank {}: ranks disagree: rank {} called {} with {}, rank {} {}with {}", backend, what,
                      me, me, describe(mine), algorithm(mine), peer, theirs_call, algorithm(theirs));
  }
  if (mine.sequence != theirs.sequence)
    msg += fmt::format(" (as collective #{} and #{} of the backend)", mine.sequence, theirs.sequence);
  throw DisagreementError(msg);
}

void throw_receive_size_mismatch(std::string_view backend, std::string_view what, int me, int src, std::uint64_t buffer,
                                 std::uint64_t message) {
  throw CommError(fmt::format("{} {} on rank {}: ranks disagree: rank {} received into {} bytes, rank {} sent {} bytes",
                              backend, what, me, me, buffer, src, message));
}

void throw_send_refused(std::string_view backend, std::string_view what, int me, int dst, std::uint64_t buffer,
                        std::uint64_t message) {
  throw CommError(fmt::format("{} {} on rank {}: ranks disagree: rank {} sent {} bytes, rank {} received into {} bytes",
                              backend, what, me, me, message, dst, buffer));
}

}  // namespace chorus::rt
