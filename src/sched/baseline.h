#pragma once
// Baseline hierarchical scheduling (Themis Sec. 2.3): every chunk runs reduce-scatter
// stages dim1..dimD, then all-gather stages dimD..dim1. All-to-all visits dim1..dimD.
#include <vector>

#include "coll/collective.h"
#include "net/network.h"
#include "sched/schedule.h"

namespace chorus::sched {

// The baseline order of dimensions for one phase: ascending for RS and all-to-all,
// descending for AG.
std::vector<int> baseline_order(coll::Phase phase, int num_dims);

// Stages of one chunk of `op` given its reduce-scatter (or all-to-all) order and its
// all-gather order.
std::vector<Stage> chunk_stages(CollectiveKind op, const std::vector<int>& rs_order, const std::vector<int>& ag_order);

Schedule baseline_schedule(const net::Network& network, CollectiveKind op, double size_bytes, int num_chunks);

}  // namespace chorus::sched
