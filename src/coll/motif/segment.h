#pragma once
// Segmentation S(d) (SYNDICATE Sec. 4.2.1, Appendix A.1): split the payload of a motif into
// segments of d bytes, each an independent motif of the same kind, ranks and pattern:
//   AR(T_i[0:D]) = ||_{s=0}^{ceil(D/d)-1} AR(T_i[s*d : min((s+1)*d, D)])
// and the same for all-to-all (each per-destination block is segmented), broadcast, and the
// other kinds. When d does not divide D the last segment is shorter (D mod d bytes).
#include "coll/motif/transform.h"

namespace chorus::coll::motif {

// Children of S(d) for one motif; nullopt when the motif is no longer than d bytes.
// Throws InputError when d == 0.
Children segment(const Motif& m, Bytes d);

}  // namespace chorus::coll::motif
