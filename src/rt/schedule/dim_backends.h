#pragma once
// `--dim-backends auto` for the schedule executor: each dimension's groups on the backend the
// tuning table (MCR-DL's Table II, docs/runtime-backends.md) says is fastest for exactly the operations
// the schedule runs on that dimension. A dimension of size P runs, per chunk and phase, one
// reduce-scatter, all-gather or all-to-all of a known size on groups of P ranks; the estimate of a backend
// is the sum of its tuned times for those (operation, P, bytes). The choice is made from the
// schedule and the table alone, so every rank makes the same one.
#include <map>
#include <string>
#include <vector>

#include "rt/tuning_table.h"
#include "sched/schedule.h"

namespace chorus::rt {

struct DimBackendChoice {
  std::string backend;
  // "given" (named by the user), "tuning table", or "default (<why>)": the runtime's default
  // order, because no table row covers this dimension's operations.
  std::string chosen_by;
  std::map<std::string, double> estimate_us;  // per backend with a complete estimate
};

// One (operation, bytes) a dimension runs: bytes as `chorus bench` counts them, the whole
// buffer of a reduce-scatter's input or an all-gather's output (per rank).
struct DimCall {
  CollectiveKind op;
  double bytes;
};

// The group operations of every dimension of `dims`, in the executor's layout (the cuts of
// schedule_executor.h): a chunk of an all-reduce or reduce-scatter starts whole and shrinks by
// P_d at each reduce-scatter stage; an all-gather stage grows it by P_d; an all-to-all chunk
// stays whole.
std::vector<std::vector<DimCall>> dim_calls(const sched::Schedule& schedule, const std::vector<int>& dims);

// `requested`: one entry for all dimensions or one per dimension, each a backend name or
// "auto". `initialised`: the backends in the runtime's preference order (rt::backends()), the
// candidates for "auto". `table`: the loaded tuning table, or null.
std::vector<DimBackendChoice> choose_dim_backends(const sched::Schedule& schedule, const std::vector<int>& dims,
                                                  const std::vector<std::string>& requested, const TuningTable* table,
                                                  const std::vector<std::string>& initialised);

}  // namespace chorus::rt
