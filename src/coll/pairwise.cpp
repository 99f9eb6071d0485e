// Pairwise-exchange all-to-all on a switch dimension of p NPUs: p-1 steps, in step s
// each NPU exchanges its block for peer (rank xor s) (or rank + s mod p); it sends
// (p-1)/p of its resident data in total and never contends for a switch port.
#include "coll/stage_cost.h"

namespace chorus::coll {

StageCost pairwise_all_to_all_cost(int p, double bytes_before) { return {p - 1, bytes_before * (p - 1) / p}; }

}  // namespace chorus::coll
