#pragma once
// Collective operations and the per-dimension stages they are made of (Themis Sec. 2).
#include <string>
#include <string_view>

#include "core/collective_kind.h"

namespace chorus::coll {

// What the workload asks for: the four kinds Themis schedules (kThemisCollectives).
inline constexpr CollectiveKind kThemisCollectives[] = {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter,
                                                        CollectiveKind::kAllGather, CollectiveKind::kAllToAll};

// What one dimension executes for one chunk: a stage of a hierarchical collective.
// An all-reduce is reduce-scatter stages over every dimension followed by all-gather stages.
// kPointToPoint is not a collective's stage: a training DAG's transfer of its bytes from every
// NPU to one peer on a dimension (pipeline stages, a send / recv pair), with the bandwidth of
// the links to that peer (coll/stage_cost.h).
enum class Phase { kReduceScatter, kAllGather, kAllToAll, kPointToPoint };

std::string_view to_string(Phase phase);  // "RS", "AG", "A2A", "P2P"
// Accepts allreduce|all-reduce|all_reduce|ar, reducescatter|rs, allgather|ag, alltoall|a2a.
bool parse_collective_op(std::string_view text, CollectiveKind& op);
// The same, or an InputError naming `field`, the closest name and the four names.
CollectiveKind parse_collective_op(std::string_view text, const std::string& field);

// Size convention of Themis Sec. 2.3: a stage's size is the data resident on each NPU
// before the stage begins. For a collective of size S on P NPUs:
//   all-reduce / reduce-scatter / all-to-all: S bytes resident per NPU at the start;
//   all-gather: S is the gathered (final) size, so S / P is resident at the start.
double initial_resident_bytes(CollectiveKind op, double size_bytes, double total_npus);

// Resident bytes after a stage on a dimension of `dim_size` NPUs.
double resident_after(Phase phase, double bytes_before, int dim_size);

}  // namespace chorus::coll
