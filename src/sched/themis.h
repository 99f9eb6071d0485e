#pragma once
// Themis (ISCA '22) Algorithm 1: bandwidth-aware, per-chunk scheduling of the order in
// which each chunk traverses the dimensions, balancing the predicted load of every
// dimension. Deterministic: every NPU computes the same schedule (Sec. 4.6.1).
#include "coll/collective.h"
#include "net/network.h"
#include "sched/schedule.h"

namespace chorus::sched {

struct ThemisOptions {
  // Threshold of line 19 (Sec. 5.3): Latency-Model time of a stage of chunkSize / divisor
  // on the currently least-loaded dimension.
  double threshold_divisor = 16.0;
  IntraDimPolicy policy = IntraDimPolicy::kSmallestChunkFirst;
};

// All-to-all is not part of Algorithm 1 (its per-dimension bytes do not depend on the
// order); it gets the baseline order.
Schedule themis_schedule(const net::Network& network, CollectiveKind op, double size_bytes, int num_chunks,
                         const ThemisOptions& options = {});

}  // namespace chorus::sched
