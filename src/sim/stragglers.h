#pragma once
// Stragglers: per-NPU compute speeds in the training-DAG simulator. The DAG is one NPU's
// view of a synchronous job per pipeline stage: every collective of a stage waits for its slowest
// member, so each compute node of a stage takes its time divided by the slowest speed among the
// stage's NPUs (exact for the data-parallel all-reduce, which no member can run ahead of).
#include <cstdint>
#include <string>
#include <vector>

#include "net/network.h"
#include "workload/dag.h"

namespace chorus::sim {

// Each of `npus` speeds uniform in [min, max] (chorus::Rng with `seed`), in NPU order.
std::vector<double> draw_speeds(std::uint64_t npus, double min, double max, std::uint64_t seed);

// `--speeds`: a comma list of one speed per NPU ("1,1,0.5,1"), or "uniform:MIN:MAX:SEED".
// InputError naming `field`: not numbers, not > 0, a count other than `npus`, MIN > MAX.
std::vector<double> parse_speeds(const std::string& text, std::uint64_t npus, const std::string& field);

// The pipeline stage of every NPU of `network` for `stages` stages: stages lie on the network's
// last dimensions (workload::pipeline_dims) in reflected Gray-code order (workload::stage_link_dim);
// NPUs are numbered with dimension 1 fastest. All 0 for one stage.
std::vector<int> npu_stages(const net::Network& network, int stages);

// `compute_ns` (per DAG node) with every node divided by its stage's slowest NPU speed; `speeds`
// per NPU of `network` (empty: unchanged). InputError naming `field` for a wrong count.
std::vector<double> straggler_compute_ns(const workload::Dag& dag, const net::Network& network,
                                         std::vector<double> compute_ns, const std::vector<double>& speeds,
                                         const std::string& field);

}  // namespace chorus::sim
