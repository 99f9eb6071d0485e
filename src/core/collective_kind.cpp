#include "core/collective_kind.h"

#include <cctype>

namespace chorus {

std::string_view to_string(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kSend:
      return "send";
    case CollectiveKind::kRecv:
      return "recv";
    case CollectiveKind::kBarrier:
      return "barrier";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kReduce:
      return "reduce";
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kGather:
      return "gather";
    case CollectiveKind::kScatter:
      return "scatter";
    case CollectiveKind::kAllToAll:
      return "all_to_all";
    case CollectiveKind::kAllToAllSingle:
      return "all_to_all_single";
    case CollectiveKind::kAllGatherv:
      return "all_gatherv";
    case CollectiveKind::kGatherv:
      return "gatherv";
    case CollectiveKind::kScatterv:
      return "scatterv";
    case CollectiveKind::kAllToAllv:
      return "all_to_allv";
  }
  return "?";
}

std::string fold_kind_name(std::string_view text) {
  std::string out;
  for (char c : text)
    if (c != '_' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string compact_name(CollectiveKind kind) { return fold_kind_name(to_string(kind)); }

std::optional<CollectiveKind> find_collective_kind(std::string_view text, std::span<const CollectiveKind> accepted) {
  const std::string key = fold_kind_name(text);
  for (CollectiveKind k : accepted)
    if (key == compact_name(k)) return k;
  return std::nullopt;
}

}  // namespace chorus
