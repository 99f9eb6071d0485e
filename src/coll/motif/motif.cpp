// Motif value types (SYNDICATE Sec. 4.2, Appendix A.1).
#include "coll/motif/motif.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "core/error.h"

namespace chorus::coll::motif {

std::string_view short_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "AR";
    case CollectiveKind::kAllToAll:
      return "AA";
    case CollectiveKind::kBroadcast:
      return "BC";
    case CollectiveKind::kReduce:
      return "RE";
    case CollectiveKind::kReduceScatter:
      return "RS";
    case CollectiveKind::kAllGather:
      return "AG";
    default:  // not a motif (kMotifKinds)
      break;
  }
  return "?";
}

bool parse_kind(std::string_view text, CollectiveKind& kind) {
  const std::string key = fold_kind_name(text);
  for (CollectiveKind k : kMotifKinds)
    if (key == fold_kind_name(short_name(k))) {
      kind = k;
      return true;
    }
  if (key == "a2a" || key == "bcast") {
    kind = key == "a2a" ? CollectiveKind::kAllToAll : CollectiveKind::kBroadcast;
    return true;
  }
  const auto found = find_collective_kind(text, kMotifKinds);
  if (found) kind = *found;
  return found.has_value();
}

bool is_comm_op(CollectiveKind kind) {
  return kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kAllToAll || kind == CollectiveKind::kBroadcast;
}

CommOp make_comm_op(CollectiveKind kind, int n, Bytes bytes, int root) {
  if (!is_comm_op(kind))
    throw InputError("op", "a comm-op is all_reduce, all_to_all or broadcast, got " + std::string(to_string(kind)));
  if (n < 1 || n > 65536) throw InputError("ranks", "must be in 1..65536, got " + std::to_string(n));
  if (bytes == 0) throw InputError("bytes", "the payload must be at least 1 byte");
  if (kind == CollectiveKind::kBroadcast && (root < 0 || root >= n))
    throw InputError("root", "must be one of the ranks 0.." + std::to_string(n - 1) + ", got " + std::to_string(root));
  CommOp op;
  op.kind = kind;
  op.bytes = bytes;
  op.root = kind == CollectiveKind::kBroadcast ? root : -1;
  for (int r = 0; r < n; ++r) op.ranks.push_back(r);
  return op;
}

MotifPlan single_motif_plan(const CommOp& op) {
  Motif m;
  m.kind = op.kind;
  m.ranks = op.ranks;
  m.root = op.root;
  m.bytes = {0, op.bytes};
  if (op.kind == CollectiveKind::kAllToAll) {
    // Source ranks[i] sends to (i + k) % N for k = 0..N-1: itself first, then round the ring,
    // the order splining slices (Appendix A.1).
    const std::size_t n = op.ranks.size();
    m.destinations.resize(n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = 0; k < n; ++k) m.destinations[i].push_back(op.ranks[(i + k) % n]);
  }
  m.label = std::string(short_name(op.kind));
  return MotifPlan{op, {m}};
}

std::string describe(const Motif& m) {
  std::string s = std::string(short_name(m.kind));
  if (m.root >= 0) s += "_" + std::to_string(m.root);
  s += "[" + std::to_string(m.bytes.begin) + "," + std::to_string(m.bytes.end) + ") on ranks {";
  for (std::size_t i = 0; i < m.ranks.size(); ++i) s += (i ? "," : "") + std::to_string(m.ranks[i]);
  s += "}";
  if (m.kind == CollectiveKind::kAllToAll) {
    s += " dst";
    for (std::size_t i = 0; i < m.destinations.size(); ++i) {
      s += (i ? " " : " ") + std::to_string(i < m.ranks.size() ? m.ranks[i] : -1) + "->{";
      for (std::size_t k = 0; k < m.destinations[i].size(); ++k)
        s += (k ? "," : "") + std::to_string(m.destinations[i][k]);
      s += "}";
    }
  }
  if (!m.after.empty()) {
    s += " after";
    for (int p : m.after) s += " #" + std::to_string(p);
  }
  return s;
}

}  // namespace chorus::coll::motif
