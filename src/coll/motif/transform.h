#pragma once
// The shape every motif transformation operator shares (SYNDICATE Sec. 4.2.1, Appendix A.1).
#include <optional>
#include <vector>

#include "coll/motif/motif.h"

namespace chorus::coll::motif {

// A transform's result for one motif: its children, in an order where every child comes after
// the children it depends on. `after` of a child indexes this vector (dependencies among the
// children only); children with an empty `after` inherit the parent's dependencies (compose.h).
// std::nullopt: the transform does not apply to that motif (wrong kind, or it would produce a
// single child equal to the motif).
using Children = std::optional<std::vector<Motif>>;

}  // namespace chorus::coll::motif
