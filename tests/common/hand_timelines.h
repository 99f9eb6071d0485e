#pragma once
// The network and the simulator run that the hand-computed timelines of the DAG tests assume
// (sim/test_dag_executor.cpp and workload/test_workload.cpp, test_astra_examples.cpp, test_pytorch_eg.cpp).
#include <string>

#include "net/network.h"
#include "sched/scheduler.h"
#include "sim/dag_executor.h"

namespace chorus::test_support {

// One dimension, 2 NPUs, direct algorithm: an all-reduce of S bytes sends S/2 in its RS stage
// and S/2 in its AG stage, each at 1 byte/ns, plus `latency_ns` per stage (1 step each); an
// all-to-all of m bytes sends m/2.
inline net::Network pair_network(double latency_ns = 0) {
  net::Network n;
  n.name = "pair";
  n.dims.push_back(net::Dimension{net::DimKind::kFullyConnected, 2, 8.0, 1, latency_ns});
  return n;
}

inline sim::WorkloadRun run(const workload::Dag& dag, const net::Network& network,
                            const std::string& scheduler = "baseline", int chunks = 1) {
  sim::WorkloadSimOptions o;
  o.scheduler = sched::parse_scheduler(scheduler);
  o.chunks_per_collective = chunks;
  return sim::simulate_workload(dag, network, o);
}

}  // namespace chorus::test_support
