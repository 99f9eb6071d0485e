#pragma once
// All-to-all splining P(n) (SYNDICATE Sec. 4.2.1, Appendix A.1):
//   AA(T_i[0:N, 0:D]) = ||_{c=0}^{N/n-1} AA(T_i[(i+c*n)%N .. (i+(c+1)*n-1)%N, 0:D])
// motif c: source i sends to the n destinations that follow (i + c*n) mod N round the ring
// (cyclically; the appendix's "a % N : b % N" range wraps, docs/motifs.md). When n does not
// divide N there are ceil(N/n) motifs, the last with N mod n destinations per source.
// On a motif already splined (destination lists shorter than N), each source's list is cut
// into consecutive runs of n in its order.
#include "coll/motif/transform.h"

namespace chorus::coll::motif {

// Children of P(n) for an all-to-all motif; nullopt for other kinds and when every source has
// at most n destinations. Throws InputError when n < 1.
Children spline_all_to_all(const Motif& m, int n);

}  // namespace chorus::coll::motif
