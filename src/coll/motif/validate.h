#pragma once
// The validity check of a motif plan (docs/motifs.md), by executing it on the byte level:
//  1. every motif is well formed (ranks of the comm-op, distinct; bytes inside [0, D); roots
//     among its ranks; kinds the comm-op can be made of), dependencies name other motifs, have
//     no cycle, and no motif is listed before one of its parents (a child never before its
//     parent: the list is an order the enforcer may issue);
//  2. motifs with no dependency path between them may run at the same time, so they must not
//     touch the same bytes of a rank's buffer where one of them writes;
//  3. the plan's transfers (pattern.h) are executed in list order on every byte, each byte
//     holding the multiset of contributions it carries, and the result must be the comm-op's:
//       all-reduce: every rank's byte b holds the contribution of every rank exactly once;
//       broadcast: every rank's byte b holds the root's byte b, written exactly once
//         (never at the root);
//       all-to-all: rank j's receive block from i holds i's block for j, every byte written
//         exactly once (messages number that block's contribution pos(i) * N + pos(j)).
// Byte ranges are handled as the elementary intervals between all range boundaries in the plan,
// the same as byte by byte.
#include <functional>
#include <string>
#include <vector>

#include "coll/motif/motif.h"
#include "coll/motif/pattern.h"

namespace chorus::coll::motif {

// The problems found, each a sentence naming motifs (#index), ranks and bytes; empty when the
// plan is valid. Stops after `max_problems`.
std::vector<std::string> check(const MotifPlan& plan, std::size_t max_problems = 20);

// The same check with another pattern for each motif than pattern.h's (to test readings of the
// paper, e.g. a ring of N rounds).
std::vector<std::string> check(const MotifPlan& plan,
                               const std::function<std::vector<Transfer>(const Motif&)>& pattern_of,
                               std::size_t max_problems = 20);

// Throws std::invalid_argument with the first problems when check() finds any.
void validate(const MotifPlan& plan);

}  // namespace chorus::coll::motif
