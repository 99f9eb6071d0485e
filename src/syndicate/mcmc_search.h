#pragma once
// SYNDICATE's joint optimizer (Sec. 4.3.1, Pseudocode 1): Metropolis-Hastings over the
// execution-plan choices, each plan costed by optSched.
//  - start: the greedy plan (every comm-op's fastest option alone);
//  - move: one comm-op drawn uniformly among those with more than one option gets another of
//    its options, drawn uniformly;
//  - accept with probability min(1, exp(beta * (C* - C_new) / C_greedy)): beta is relative to the
//    greedy plan's cost: beta = 10^4 accepts a plan 0.01 % worse than the current one with
//    probability 1/e (the paper leaves beta open; docs/syndicate.md compares values);
//  - stop after max_evaluations, at the time budget, or when no better plan has been found in
//    more than half of the evaluations so far (the paper's "half of the elapsed search time",
//    counted in evaluations so that a seed gives the same plan on every machine; not before
//    min_evaluations, nor before 4 evaluations per option of the comm-ops that have a choice);
//  - return the best plan seen (never worse than the start); among plans of equal cost, the one
//    with the least communication work (sum of its options' solo times).
#include <cstdint>
#include <string>

#include "syndicate/opt_sched.h"

namespace chorus::syndicate {

struct SearchOptions {
  std::uint64_t seed = 1;
  double beta = 1e4;
  long max_evaluations = 20000;
  long min_evaluations = 1000;
  double time_budget_s = 10;
  SchedOptions sched;
};

struct SearchResult {
  PlanChoice plan;           // the best plan seen
  double cost_ns = 0;        // its iteration time
  double start_cost_ns = 0;  // the start plan's
  long evaluations = 0;      // optSched runs, the start's included
  long accepted = 0;
  long improvements = 0;
  double search_s = 0;
  std::string stopped_by;  // "evaluations", "budget", "stagnation", "no-choice"
};

SearchResult mcmc_search(Scheduler& scheduler, const Problem& problem, const PlanChoice& start,
                         const SearchOptions& options);

}  // namespace chorus::syndicate
