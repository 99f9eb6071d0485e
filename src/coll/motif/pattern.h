#pragma once
// The point-to-point transfers a motif stands for, round by round: what the enforcer would issue
// and what the validity check (validate.h) executes on the byte level.
#include <compare>
#include <vector>

#include "coll/motif/motif.h"

namespace chorus::coll::motif {

// Which buffer of a rank: its tensor T_i (all-reduce family, broadcast), or for all-to-all its
// send block for a destination / receive block from a source (`block` = that peer's rank id).
enum class Buffer { kData, kSend, kRecv };

struct Address {
  int rank = 0;
  Buffer buffer = Buffer::kData;
  int block = 0;
  auto operator<=>(const Address&) const = default;
};

// One transfer in round `round` of its motif: copy (or add, when `reduce`) bytes `bytes` of
// `src` into the same bytes of `dst`. Transfers of one round read what was there before it.
struct Transfer {
  int round = 0;
  bool reduce = false;
  Address src;
  Address dst;
  ByteRange bytes;
};

// all_reduce: one round, every rank adds its bytes into every other rank (a direct all-reduce;
//   the motif stays one unit of work however a library runs it);
// reduce: one round, every other rank adds into the root (convergent pattern);
// broadcast: one round, the root copies to every other rank (divergent pattern);
// reduce_scatter / all_gather: the ring of Appendix A.1, N-1 rounds each (docs/motifs.md):
//   the range is cut into N pieces, piece k = [b + L*k/N, b + L*(k+1)/N) for L bytes from b;
//   RS round r: position i adds piece (i - r) mod N into position i+1, so that afterwards
//   position i holds the sum of piece (i + 1) mod N; AG round r: position i copies piece
//   (i + 1 - r) mod N to position i+1. Empty pieces (L < N) are not sent.
// all_to_all: one round, a copy per (source, destination) pair, the source's own block included.
std::vector<Transfer> pattern(const Motif& m);

// The ring of a reduce_scatter / all_gather motif with `rounds` rounds instead of N-1 (to check
// the appendix's "for N rounds" against N-1, docs/motifs.md).
std::vector<Transfer> ring_pattern(const Motif& m, int rounds);

// pattern(m).size() without building it, when no ring piece is empty (an upper bound otherwise).
std::size_t transfer_count(const Motif& m);

// Piece k of N of a range, as the ring cuts it.
ByteRange ring_piece(ByteRange range, int k, int n);

}  // namespace chorus::coll::motif
