#pragma once
// `chorus reproduce shared-fabric` (docs/shared-fabric.md): two training jobs on two racks
// joined by one link, placed by each policy, and the same with start shifts searched by simulation
// (CASSINI's idea) against no shift. Writes shared_fabric.{csv,json,txt} and the figure
// shared_fabric.svg (python/chorus/plot/shared_fabric.py).
#include <string>
#include <vector>

#include "eval/themis_microbench.h"
#include "net/graph/graph_network.h"

namespace chorus::eval {

// Servers 0-3 under ToR 8, 4-7 under ToR 9, every link 100 Gb/s and 1 us; 8 <-> 9 is the only way
// between the racks (examples/jobs/two-racks.yaml).
net::GraphNetwork two_racks_fabric();

struct SharedFabricRow {
  std::string workloads;  // "resnet152+gnmt": job a's and job b's
  std::string placement;  // contiguous, topology-aware, random, interleaved
  std::vector<int> servers_a, servers_b;
  double alone_a_ns = 0, alone_b_ns = 0;                  // iteration time alone, on the same servers
  double slowdown_a = 0, slowdown_b = 0;                  // no shift
  double shifted_slowdown_a = 0, shifted_slowdown_b = 0;  // with the shifts found
  double shift_b_ns = 0;                                  // the second job's shift found
  int evaluations = 0;
};

struct SharedFabricStudy {
  int iterations = 3;
  int shift_steps = 8;
  std::vector<SharedFabricRow> rows;
};

// `iterations` of GNMT per job, 5x as many of ResNet-152 (about as long a run); the job mixes
// `workers` at once on a pool of threads (the rows do not depend on it).
SharedFabricStudy run_shared_fabric_study(int iterations, int shift_steps, const Progress& progress = {},
                                          int workers = 1);
std::string format_shared_fabric_table(const SharedFabricStudy& study);
std::vector<std::string> write_shared_fabric_outputs(const SharedFabricStudy& study, const std::string& out_dir);

}  // namespace chorus::eval
