#include "coll/collective.h"

#include <algorithm>
#include <cctype>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "core/suggest.h"

namespace chorus::coll {

std::string_view to_string(Phase phase) {
  switch (phase) {
    case Phase::kReduceScatter:
      return "RS";
    case Phase::kAllGather:
      return "AG";
    case Phase::kAllToAll:
      return "A2A";
    case Phase::kPointToPoint:
      return "P2P";
  }
  return "?";
}

bool parse_collective_op(std::string_view text, CollectiveKind& op) {
  static constexpr std::pair<std::string_view, CollectiveKind> kShort[] = {{"ar", CollectiveKind::kAllReduce},
                                                                           {"rs", CollectiveKind::kReduceScatter},
                                                                           {"ag", CollectiveKind::kAllGather},
                                                                           {"a2a", CollectiveKind::kAllToAll}};
  const std::string key = fold_kind_name(text);
  for (const auto& [name, kind] : kShort)
    if (key == name) {
      op = kind;
      return true;
    }
  const auto found = find_collective_kind(text, kThemisCollectives);
  if (found) op = *found;
  return found.has_value();
}

CollectiveKind parse_collective_op(std::string_view text, const std::string& field) {
  CollectiveKind op{};
  if (!parse_collective_op(text, op))
    throw InputError(
        field,
        fmt::format("unknown operation '{}'{}; use allreduce, reducescatter, allgather or alltoall "
                    "(underscores optional)",
                    text, did_you_mean(std::string(text), {"allreduce", "reducescatter", "allgather", "alltoall"})));
  return op;
}

double initial_resident_bytes(CollectiveKind op, double size_bytes, double total_npus) {
  return op == CollectiveKind::kAllGather ? size_bytes / total_npus : size_bytes;
}

double resident_after(Phase phase, double bytes_before, int dim_size) {
  switch (phase) {
    case Phase::kReduceScatter:
      return bytes_before / dim_size;
    case Phase::kAllGather:
      return bytes_before * dim_size;
    case Phase::kAllToAll:
    case Phase::kPointToPoint:
      return bytes_before;
  }
  return bytes_before;
}

}  // namespace chorus::coll
