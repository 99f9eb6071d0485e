#pragma once
// SYNDICATE's motifs (Sec. 4.2, Appendix A.1): a comm-op sliced along its payload (segmentation)
// or its pattern of transfers (splining) into smaller units of work with an order between them.
// docs/motifs.md describes the algebra and which reading of the appendix's typos is implemented.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/collective_kind.h"

namespace chorus::coll::motif {

using Bytes = std::uint64_t;

// What a motif (or a comm-op) does. A comm-op is all-reduce, all-to-all or broadcast; reduce,
// reduce-scatter and all-gather appear as motifs produced by splining an all-reduce.
inline constexpr CollectiveKind kMotifKinds[] = {CollectiveKind::kAllReduce,     CollectiveKind::kAllToAll,
                                                 CollectiveKind::kBroadcast,     CollectiveKind::kReduce,
                                                 CollectiveKind::kReduceScatter, CollectiveKind::kAllGather};

std::string_view short_name(CollectiveKind kind);  // the appendix's symbols: AR, AA, BC, RE, RS, AG
// Accepts the to_string() names, the short names (any case) and "allreduce", "alltoall", "a2a".
bool parse_kind(std::string_view text, CollectiveKind& kind);

// Half-open byte range [begin, end) of a tensor (for all-to-all: of each per-destination block).
struct ByteRange {
  Bytes begin = 0;
  Bytes end = 0;
  Bytes size() const { return end - begin; }
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

// The user's comm-op: kind, process group PG (distinct rank ids, in ring order) and the payload
// D per process. Broadcast: T_root[0:D] goes to every rank. All-reduce: every rank ends with the
// sum of all T_i[0:D]. All-to-all (the paper's T_i[0:N, 0:D]): rank i holds one block of D bytes
// per destination, block j goes to ranks[j].
struct CommOp {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::vector<int> ranks;
  Bytes bytes = 0;
  int root = -1;  // broadcast only
};

// A comm-op is all-reduce, all-to-all or broadcast.
bool is_comm_op(CollectiveKind kind);

// The comm-op on ranks 0..n-1. Throws InputError on bad parameters (n < 1, bytes == 0, root
// outside the ranks, a kind that is not a comm-op).
CommOp make_comm_op(CollectiveKind kind, int n, Bytes bytes, int root = 0);

// One motif: kind, the ranks taking part, the byte range it moves, and what goes where.
//  all_reduce / reduce_scatter / all_gather: T_i[bytes] of every rank in `ranks`;
//  reduce / broadcast: towards / from `root` (one of `ranks`);
//  all_to_all: source ranks[k] sends its block for each rank in destinations[k], bytes `bytes`
//    of that block, into the destination's receive block for ranks[k].
// `after` lists the motifs of the same plan (indices) that must complete before this one starts:
// its parents. Motifs with no path between them may run in parallel.
struct Motif {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  std::vector<int> ranks;
  int root = -1;
  ByteRange bytes;
  std::vector<std::vector<int>> destinations;  // all_to_all only, one list per entry of ranks
  std::vector<int> after;
  std::string label;  // how the motif was derived, e.g. "S1/P:RS"; for people, not checked
};

// A comm-op and the motifs that carry it out, listed in an order the enforcer may issue them:
// every motif after all of its parents.
struct MotifPlan {
  CommOp op;
  std::vector<Motif> motifs;
};

// The comm-op as a single motif (the paper: the collective is the special case d = D, n = N).
MotifPlan single_motif_plan(const CommOp& op);

// "AR[0,4096) on 8 ranks after #1,#2", for messages and the CLI.
std::string describe(const Motif& m);

}  // namespace chorus::coll::motif
