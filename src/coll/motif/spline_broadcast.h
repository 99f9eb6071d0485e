#pragma once
// Broadcast splining P(n) (SYNDICATE Fig. 9): the root sends the same payload to subsets of the
// destinations. The destinations, taken round the ring from the rank after the root, are cut
// into groups of n consecutive ranks; motif c is a broadcast from the root to group c. The
// motifs are independent (they only read the root's tensor).
#include "coll/motif/transform.h"

namespace chorus::coll::motif {

// Children of P(n) for a broadcast motif; nullopt for other kinds and when the root has at most
// n destinations. Throws InputError when n < 1.
Children spline_broadcast(const Motif& m, int n);

}  // namespace chorus::coll::motif
