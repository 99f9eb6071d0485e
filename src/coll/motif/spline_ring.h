#pragma once
// Ring splining (SYNDICATE Appendix A.1, "Ring All-Reduce"):
//   AR(T_i[0:D], PG) = RS(T_i[0:D], PG) -> AG(T_i[0:D], PG)
// a reduce-scatter motif then an all-gather motif, each a ring pattern of N-1 rounds (pattern.h).
#include "coll/motif/transform.h"

namespace chorus::coll::motif {

// Children {RS, AG after RS} of an all-reduce motif on at least 2 ranks; nullopt otherwise.
Children spline_ring(const Motif& m);

}  // namespace chorus::coll::motif
