#pragma once
// The plans SYNDICATE's evaluation compares (Sec. 6.2), each a plan choice and the order that
// schedules it:
//   greedy    every comm-op's fastest option, scheduled by optSched (the MCMC start)
//   syndicate MCMC over plans costed by optSched (the joint optimizer)
//   s-exec    MCMC over plans costed under FIFO order (SYNDICATE-Exec: no scheduling)
//   s-sched   greedy options with the segment oracle, scheduled by optSched (SYNDICATE-Sched)
//   bs+       greedy options with the segment oracle, LIFO order on one stream (ByteScheduler+)
//   fifo      greedy options, FIFO order on one stream (PyTorch's default)
// The segment oracle (BS+'s stand-in for ByteScheduler's tensor partitioning): for each comm-op
// in turn, the segment count among its options with the same algorithm, splining and path that
// minimises the iteration time under the method's order, repeated until a pass changes nothing
// (at most 4 passes): a coordinate descent, not an exhaustive search (docs/syndicate.md).
#include <string>
#include <vector>

#include "syndicate/mcmc_search.h"

namespace chorus::syndicate {

enum class Method { kGreedy, kSyndicate, kSExec, kSSched, kBsPlus, kFifo };

std::string_view to_string(Method m);  // "greedy", "syndicate", "s-exec", "s-sched", "bs+", "fifo"
// Parses the baselines of `chorus plan --baseline` (bs+, s-exec, s-sched, fifo); InputError naming `field`.
Method parse_baseline(const std::string& text, const std::string& field);
const std::vector<Method>& all_methods();

struct MethodResult {
  Method method = Method::kGreedy;
  PlanChoice plan;
  SchedOptions sched;
  Schedule schedule;     // recorded
  long evaluations = 0;  // optSched runs spent finding the plan
  double search_s = 0;
  std::string stopped_by;  // for the MCMC methods
};

// `search` gives the MCMC's seed, beta and limits (its `sched` is set per method).
MethodResult run_method(Method m, Scheduler& scheduler, const Problem& problem, const SearchOptions& search);

}  // namespace chorus::syndicate
