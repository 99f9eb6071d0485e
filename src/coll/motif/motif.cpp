// Motif value types (SYNDICATE Sec. 4.2, Appendix A.1).
#include "coll/motif/motif.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "core/error.h"

namespace chorus::coll::motif {

std::string_view to_string(Kind kind) {
  switch (kind) {
    case Kind::kAllReduce:
      return "all_reduce";
    case Kind::kAllToAll:
      return "all_to_all";
    case Kind::kBroadcast:
      return "broadcast";
    case Kind::kReduce:
      return "reduce";
    case Kind::kReduceScatter:
      return "reduce_scatter";
    case Kind::kAllGather:
      return "all_gather";
  }
  return "?";
}

std::string_view short_name(Kind kind) {
  switch (kind) {
    case Kind::kAllReduce:
      return "AR";
    case Kind::kAllToAll:
      return "AA";
    case Kind::kBroadcast:
      return "BC";
    case Kind::kReduce:
      return "RE";
    case Kind::kReduceScatter:
      return "RS";
    case Kind::kAllGather:
      return "AG";
  }
  return "?";
}

bool parse_kind(std::string_view text, Kind& kind) {
  std::string t(text);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::replace(t.begin(), t.end(), '-', '_');
  for (Kind k :
       {Kind::kAllReduce, Kind::kAllToAll, Kind::kBroadcast, Kind::kReduce, Kind::kReduceScatter, Kind::kAllGather}) {
    std::string s(short_name(k));
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (t == to_string(k) || t == s) {
      kind = k;
      return true;
    }
  }
  if (t == "allreduce")
    kind = Kind::kAllReduce;
  else if (t == "alltoall" || t == "a2a")
    kind = Kind::kAllToAll;
  else if (t == "bcast")
    kind = Kind::kBroadcast;
  else
    return false;
  return true;
}

CommOp make_comm_op(Kind kind, int n, Bytes bytes, int root) {
  if (kind != Kind::kAllReduce && kind != Kind::kAllToAll && kind != Kind::kBroadcast)
    throw InputError("op", "a comm-op is all_reduce, all_to_all or broadcast, got " + std::string(to_string(kind)));
  if (n < 1 || n > 65536) throw InputError("ranks", "must be in 1..65536, got " + std::to_string(n));
  if (bytes == 0) throw InputError("bytes", "the payload must be at least 1 byte");
  if (kind == Kind::kBroadcast && (root < 0 || root >= n))
    throw InputError("root", "must be one of the ranks 0.." + std::to_string(n - 1) + ", got " + std::to_string(root));
  CommOp op;
  op.kind = kind;
  op.bytes = bytes;
  op.root = kind == Kind::kBroadcast ? root : -1;
  for (int r = 0; r < n; ++r) op.ranks.push_back(r);
  return op;
}

MotifPlan single_motif_plan(const CommOp& op) {
  Motif m;
  m.kind = op.kind;
  m.ranks = op.ranks;
  m.root = op.root;
  m.bytes = {0, op.bytes};
  if (op.kind == Kind::kAllToAll) {
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
  if (m.kind == Kind::kAllToAll) {
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
