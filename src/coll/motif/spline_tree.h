#pragma once
// Tree splining (SYNDICATE Appendix A.1, "Tree All-Reduce"; the appendix names it C, we call
// it P(n) like every splining, docs/motifs.md): cut the N ranks into groups of n consecutive
// ranks, group c = ranks[c*n : min((c+1)*n, N)] with root ranks[c*n], then
//   ||_c RE_root(c)(group c) -> AR(roots) -> ||_c BC_root(c)(group c)
// Recursive: the inner all-reduce among the roots is splined again while it has more than n
// ranks, which gives the hierarchical tree. Dependencies follow the data: the first inner motif
// using a group's root waits for that group's reduce, a broadcast waits for the last inner motif
// writing its root, so disjoint subtrees proceed independently. A group of one rank (N mod n == 1) needs no reduce
// or broadcast: its rank is only a root.
#include "coll/motif/transform.h"

namespace chorus::coll::motif {

// Children of the tree splining of an all-reduce motif with more than n ranks; nullopt for
// other kinds and for all-reduces on at most n ranks. `recursive` = false splines one level.
// Throws InputError when n < 2.
Children spline_tree(const Motif& m, int n, bool recursive = true);

}  // namespace chorus::coll::motif
