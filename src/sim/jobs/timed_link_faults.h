#pragma once
// Faults that change during a run (`chorus sim jobs`, `links:` with `at_ms`, docs/shared-fabric.md):
// the links from -> to at a fraction of their bandwidth, or down (fraction 0), from one instant
// until another. At each instant the fabric's capacities change and every flow is re-rated
// (max-min fair on the new capacities); routes stay as computed at the start, so the flows of a
// link that is down wait, at rate 0, until it is back.
#include <limits>
#include <vector>

#include "net/graph/graph_network.h"
#include "net/graph/link_faults.h"

namespace chorus::sim::jobs {

struct TimedLinkFault {
  net::LinkFault fault;  // from, to, bandwidth_fraction (0: down), where ("file:line: links[i]")
  double at_ns = 0;
  double until_ns = std::numeric_limits<double>::infinity();  // the link is back then
};

struct CapacityChange {
  double at_ns = 0;
  std::vector<double> gbps;  // every link's capacity from then on
};

// One change per distinct instant at which a fault starts or ends, in time order: each link of
// `fabric` (as simulated: parallel links merged) at its bandwidth times the fractions of the faults
// in force then on it. InputError naming a fault's `where` for no link from -> to in `fabric`,
// at_ns < 0, until_ns <= at_ns, a fraction outside [0, 1], or a link down without an end.
std::vector<CapacityChange> capacity_changes(const net::GraphNetwork& fabric,
                                             const std::vector<TimedLinkFault>& faults);

}  // namespace chorus::sim::jobs
