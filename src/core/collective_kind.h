#pragma once
// Which collective: the one encoding shared by the model (coll, Themis's schedules, SYNDICATE's
// motifs and cost tables) and the runtime (rt::Call, its traits and the backends). Each part
// accepts the kinds it implements and says so by name when given another: Themis schedules
// all-reduce, reduce-scatter, all-gather and all-to-all; a motif is one of six; the runtime runs
// all sixteen, including the vector forms (v) and all-to-all over one buffer (single).
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace chorus {

enum class CollectiveKind : std::uint8_t {
  kSend,
  kRecv,
  kBarrier,
  kBroadcast,
  kReduce,
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kGather,
  kScatter,
  kAllToAll,
  kAllToAllSingle,
  kAllGatherv,
  kGatherv,
  kScatterv,
  kAllToAllv
};
inline constexpr CollectiveKind kAllCollectiveKinds[] = {
    CollectiveKind::kSend,          CollectiveKind::kRecv,      CollectiveKind::kBarrier,
    CollectiveKind::kBroadcast,     CollectiveKind::kReduce,    CollectiveKind::kAllReduce,
    CollectiveKind::kReduceScatter, CollectiveKind::kAllGather, CollectiveKind::kGather,
    CollectiveKind::kScatter,       CollectiveKind::kAllToAll,  CollectiveKind::kAllToAllSingle,
    CollectiveKind::kAllGatherv,    CollectiveKind::kGatherv,   CollectiveKind::kScatterv,
    CollectiveKind::kAllToAllv};
static_assert(std::size(kAllCollectiveKinds) == static_cast<std::size_t>(CollectiveKind::kAllToAllv) + 1);

// The API's name: "all_reduce", "all_to_all_single", ...
std::string_view to_string(CollectiveKind kind);
// The name without underscores, as nccl-tests and ASTRA-sim write it: "allreduce", "alltoall".
std::string compact_name(CollectiveKind kind);
// `text` in lower case without '-' and '_': "All-Reduce" and "all_reduce" both fold to "allreduce".
std::string fold_kind_name(std::string_view text);
// The kind among `accepted` whose compact name `text` folds to, if any. Each part of chorus
// parses with its own list of kinds and its own short aliases ("ar", "a2a") around this.
std::optional<CollectiveKind> find_collective_kind(std::string_view text, std::span<const CollectiveKind> accepted);

}  // namespace chorus
