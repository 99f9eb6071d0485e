#include "coll/collective.h"

#include <algorithm>
#include <cctype>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "core/suggest.h"

namespace chorus::coll {

std::string_view to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "allreduce";
    case CollectiveOp::kReduceScatter:
      return "reducescatter";
    case CollectiveOp::kAllGather:
      return "allgather";
    case CollectiveOp::kAllToAll:
      return "alltoall";
  }
  return "?";
}

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

bool parse_collective_op(std::string_view text, CollectiveOp& op) {
  std::string t;
  for (char c : text)
    if (c != '-' && c != '_') t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "allreduce" || t == "ar")
    op = CollectiveOp::kAllReduce;
  else if (t == "reducescatter" || t == "rs")
    op = CollectiveOp::kReduceScatter;
  else if (t == "allgather" || t == "ag")
    op = CollectiveOp::kAllGather;
  else if (t == "alltoall" || t == "a2a")
    op = CollectiveOp::kAllToAll;
  else
    return false;
  return true;
}

CollectiveOp parse_collective_op(std::string_view text, const std::string& field) {
  CollectiveOp op{};
  if (!parse_collective_op(text, op))
    throw InputError(
        field,
        fmt::format("unknown operation '{}'{}; use allreduce, reducescatter, allgather or alltoall "
                    "(underscores optional)",
                    text, did_you_mean(std::string(text), {"allreduce", "reducescatter", "allgather", "alltoall"})));
  return op;
}

double initial_resident_bytes(CollectiveOp op, double size_bytes, double total_npus) {
  return op == CollectiveOp::kAllGather ? size_bytes / total_npus : size_bytes;
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
