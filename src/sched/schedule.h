#pragma once
// A collective split into chunks, each with its own order of dimensions: the plain-data
// result of a scheduler, consumed by the simulator (and later by the runtime).
#include <string>
#include <vector>

#include "coll/collective.h"

namespace chorus::sched {

// How a dimension picks the next chunk among those waiting for it (Themis Sec. 4.3).
// kLifo (ASTRA-sim's LIFO scheduling policy): the chunks of the collective started last go first,
// each collective's own chunks in arrival order.
enum class IntraDimPolicy { kFifo, kSmallestChunkFirst, kLifo };
std::string_view to_string(IntraDimPolicy policy);  // "fifo", "scf", "lifo"

struct Stage {
  coll::Phase phase;
  int dim;  // 0-based dimension index
};

struct ChunkSchedule {
  std::vector<Stage> stages;  // executed in this order
  // Dimensions visited in `phase`, in order (e.g. rs_order / ag_order).
  std::vector<int> order(coll::Phase phase) const;
};

// One (chunk, phase) operation of a dimension's enforced execution order (Sec. 4.6.2).
struct DimOp {
  int chunk;
  coll::Phase phase;
};

struct Schedule {
  CollectiveKind op = CollectiveKind::kAllReduce;
  double size_bytes = 0;  // collective size S (Sec. 2.3 convention; see coll/collective.h)
  int num_chunks = 1;
  std::string scheduler;  // baseline | themis-fifo | themis-scf | ideal
  IntraDimPolicy policy = IntraDimPolicy::kFifo;
  std::vector<ChunkSchedule> chunks;
  // Per-dimension execution order, filled by simulating the schedule (Themis Sec. 4.6.2)
  // so that every rank can run the chunk operations of a dimension in the same order.
  std::vector<std::vector<DimOp>> dim_order;

  double chunk_bytes() const { return size_bytes / num_chunks; }
};

}  // namespace chorus::sched
