#pragma once
// ASTRA-sim's system file (its JSON "system configuration"), read with ASTRA-sim's meaning: every
// field it defines is either honoured or refused by name, never ignored (docs/astra-sim.md).
//   scheduling-policy            FIFO | LIFO: which collective's chunks a dimension serves first
//   active-chunks-per-dimension  chunks one dimension serves at once (SimOptions::max_chunks_per_dim)
//   preferred-dataset-splits     chunks per collective
//   all-reduce-implementation, reduce-scatter-implementation, all-gather-implementation,
//   all-to-all-implementation    one algorithm per dimension: ring, direct, halvingDoubling,
//                                doubleBinaryTree (all-reduce only)
//   collective-optimization      localBWAware (reduce-scatter up the dimensions, all-gather down:
//                                chorus's baseline order); baseline on a one-dimensional network
//   endpoint-delay               ns added to every algorithm step (each message's endpoint)
//   local-mem-bw                 GB/s (10^9 B/s): a reduction also moves 3 x bytes through memory
//   roofline-enabled 1           compute times by the roofline of peak-perf (TFLOP/s) and
//                                local-mem-bw (sim workload's --peak-tflops, --memory-bandwidth)
// Accepted with no effect on the time: roofline-enabled 0 (compute times as the workload gives
// them), L, o, g, G and local-reduction-delay with model-shared-bus 0, trace-enabled,
// track-local-mem, local-mem-trace-filename, boost-mode.
// Refused: EXPLICIT scheduling, one* and windowed direct implementations, *-implementation-custom,
// model-shared-bus 1, replay-only 1.
#include <string>
#include <vector>

#include "net/network.h"
#include "sched/scheduler.h"

namespace chorus::sim {

struct AstraSystem {
  std::string source;  // the file, for messages
  sched::IntraDimPolicy policy = sched::IntraDimPolicy::kFifo;
  int active_chunks_per_dimension = 1;
  int preferred_dataset_splits = 1;
  bool local_bw_aware = false;  // collective-optimization; false: ASTRA-sim's baseline
  double endpoint_delay_ns = 10;
  double local_mem_GBps = 0;  // 0: not given (no reduction cost)
  bool roofline = false;      // roofline-enabled: compute at peak_tflops and local_mem_GBps
  double peak_tflops = 0;
  // Per dimension; empty: the key is absent (the network's own choice, Themis Table 1).
  std::vector<net::Algorithm> all_reduce, reduce_scatter, all_gather, all_to_all;
};

// InputError naming `source`, the key, the dimension and, for an unknown key, the closest one.
AstraSystem parse_astra_system(const std::string& text, const std::string& source);
AstraSystem load_astra_system(const std::string& path);

// `network` running what `system` chooses: each dimension's algorithms, the endpoint delay in its
// step latency, the reduction's memory cost. InputError (naming the file, key and dimension) for a
// dimension count that differs from the network's, or a choice chorus cannot run there.
net::Network apply_astra_system(const net::Network& network, const AstraSystem& system);

// Chunks a dimension sends at once (SimOptions::transfers_per_dim): active-chunks-per-dimension
// on a network read with ASTRA-sim's meaning (every dimension per_message_bandwidth: chunks in
// flight do not share bandwidth), else 1 (they take the dimension's bandwidth in turn).
int astra_transfers_per_dim(const net::Network& network, const AstraSystem& system);

// ASTRA-sim's order of the stages (chorus's baseline) with the system's scheduling policy.
sched::SchedulerSpec astra_scheduler(const AstraSystem& system);

}  // namespace chorus::sim
