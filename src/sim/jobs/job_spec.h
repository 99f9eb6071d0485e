#pragma once
// A job mix file (`chorus sim jobs JOBS.yaml`, docs/shared-fabric.md): several training jobs on one
// graph fabric, each a workload, a placement and a start offset. Parsing only; the placement is
// resolved against the fabric by sim/jobs/placement.h. Errors name file:line, the job and the field.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "net/graph/link_faults.h"
#include "sim/jobs/timed_link_faults.h"

namespace chorus::sim::jobs {

enum class PlacementPolicy { kExplicit, kContiguous, kRandom, kTopologyAware };
std::string_view to_string(PlacementPolicy policy);  // "explicit", "contiguous", "random", "topology-aware"

struct JobSpec {
  std::string name;
  std::string workload;  // any spec workload::load reads (zoo name, workload YAML, ASTRA-sim text, Chakra trace or
                         // directory, PyTorch execution graph); relative paths resolved against the file's directory
  std::string network;   // imports only: the dimension network their collectives span (YAML or preset, `npus` NPUs);
                         // empty: one dimension of the job's NPUs
  double ns_per_cycle = 1.0;  // ASTRA-sim text workloads: nanoseconds per compute cycle
  int npus = 0;               // one NPU per fabric server
  PlacementPolicy policy = PlacementPolicy::kContiguous;
  std::vector<int> servers;  // kExplicit: NPU i on servers[i]
  std::uint64_t seed = 1;    // kRandom
  double start_ns = 0;       // the job's first iteration begins then
  int iterations = 2;
  std::vector<double> speeds;  // per NPU compute speed (1 = nominal, 0.5 = half as fast; given, or drawn
                               // uniformly in [min, max] with a seed); empty: all 1
  std::string at;              // "file:line" of the job, for errors found later (workload, placement)
  std::string placement_at;    // "file:line" of its placement (or npus) field
  std::string network_at;      // "file:line" of its network field
};

struct JobsFile {
  std::string source;
  std::string fabric;  // fabric YAML path (resolved like workloads); may be empty when the command line gives it
  std::vector<JobSpec> jobs;
  std::vector<net::LinkFault> link_faults;        // degraded or failed links of the fabric, for the whole run
  std::vector<TimedLinkFault> timed_link_faults;  // links: entries with at_ms (and until_ms): during the run
};

// `base_dir` resolves relative paths. InputError ("file:line: job 'x': field ...") for unknown keys
// (did-you-mean), missing or malformed fields, repeated job names, numbers out of range.
JobsFile parse_jobs_yaml(const std::string& text, const std::string& source, const std::string& base_dir);
JobsFile load_jobs_yaml(const std::string& path);

}  // namespace chorus::sim::jobs
