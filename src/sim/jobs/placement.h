#pragma once
// Where each job of a mix runs: the fabric servers of its NPUs (NPU i on servers[i]).
#include <vector>

#include "net/graph/graph_network.h"
#include "sim/jobs/job_spec.h"

namespace chorus::sim::jobs {

// Explicit placements are taken first and checked (servers of the fabric, none twice, no two jobs
// on one server); then, in file order, each policy takes `npus` of the servers still free:
//  - contiguous: the lowest-numbered free servers;
//  - random: a uniform draw (chorus::Rng with the job's seed, Fisher-Yates), NPUs in ascending
//    server order;
//  - topology-aware: the free servers nearest to some free server (fewest hops along the routes,
//    then lowest number), taking the anchor whose farthest pick is nearest (then the fewest hops in
//    all, then the lowest anchor): a job fills a ToR of a fat-tree, or a neighbourhood of a direct
//    fabric, when it fits. O(free servers x nodes x depth).
// InputError naming the job's file:line, the job and the field: an unknown server, a server used
// twice or by two jobs, a job larger than the fabric or than the servers left free.
std::vector<std::vector<int>> place_jobs(const std::vector<JobSpec>& jobs, const net::GraphNetwork& fabric);

}  // namespace chorus::sim::jobs
