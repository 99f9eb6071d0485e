#pragma once
// SYNDICATE's `host` topology with its channels measured on this job (`chorus tune
// --topology-out`): each backend's latency and bandwidth fitted (syndicate/channel_fit.h) to
// the times `chorus tune` measured for it, over every operation and size, so that `chorus plan`
// and `chorus run workload --topology FILE` cost motifs with this machine's numbers instead of
// the built-in `host` preset's.
#include <string>
#include <vector>

#include "rt_bench/bench_runner.h"
#include "syndicate/channel_fit.h"
#include "syndicate/topology.h"

namespace chorus::rt {

struct MeasuredTopology {
  syndicate::Topology topology;  // named "host-measured", one dimension of `world` ranks
  std::vector<std::pair<std::string, syndicate::ChannelFit>> fits;  // per channel kept
  std::string machine;
  std::vector<std::string> comment() const;  // provenance and fit quality, for the file's head
};

// From the rows of run_bench (algorithm rows "backend:algorithm" and operations the model has
// no formula for are left out): the `host` channels with measurements, refitted; those without
// are dropped. InputError if no channel is left.
MeasuredTopology measured_topology(const std::vector<BenchRow>& rows, int world, const std::string& machine);

}  // namespace chorus::rt
