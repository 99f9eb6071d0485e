#include "sim/jobs/timed_link_faults.h"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/error.h"

namespace chorus::sim::jobs {

std::vector<CapacityChange> capacity_changes(const net::GraphNetwork& fabric,
                                             const std::vector<TimedLinkFault>& faults) {
  std::vector<std::vector<std::size_t>> links(faults.size());  // per fault, the links it names
  std::set<double> instants;
  for (std::size_t k = 0; k < faults.size(); ++k) {
    const auto& f = faults[k];
    const auto& where = f.fault.where;
    if (!(f.at_ns >= 0) || !std::isfinite(f.at_ns))
      throw InputError(where, fmt::format("field 'at_ms' must be a finite number >= 0, got {}", f.at_ns / 1e6));
    if (!(f.until_ns > f.at_ns))
      throw InputError(
          where, fmt::format("field 'until_ms' ({}) must be after 'at_ms' ({})", f.until_ns / 1e6, f.at_ns / 1e6));
    const double fraction = f.fault.bandwidth_fraction;
    if (!(fraction >= 0 && fraction <= 1))
      throw InputError(where, fmt::format("field 'bandwidth_fraction' must be in [0, 1], got {}", fraction));
    if (fraction == 0 && std::isinf(f.until_ns))
      throw InputError(where,
                       "a link down from 'at_ms' needs 'until_ms' (its flows wait for it); a link down for the whole "
                       "run: leave 'at_ms' out, and routes go around it");
    for (std::size_t l = 0; l < fabric.links.size(); ++l)
      if (fabric.links[l].from == f.fault.from && fabric.links[l].to == f.fault.to) links[k].push_back(l);
    if (links[k].empty())
      throw InputError(where, fmt::format("fabric '{}' has no link {} -> {} (nodes 0..{})", fabric.name, f.fault.from,
                                          f.fault.to, fabric.nodes() - 1));
    instants.insert(f.at_ns);
    if (std::isfinite(f.until_ns)) instants.insert(f.until_ns);
  }
  std::vector<CapacityChange> changes;
  for (const double t : instants) {
    CapacityChange c;
    c.at_ns = t;
    for (const auto& link : fabric.links) c.gbps.push_back(link.gbps);
    for (std::size_t k = 0; k < faults.size(); ++k)
      if (faults[k].at_ns <= t && t < faults[k].until_ns)
        for (const auto l : links[k]) c.gbps[l] *= faults[k].fault.bandwidth_fraction;
    changes.push_back(std::move(c));
  }
  return changes;
}

}  // namespace chorus::sim::jobs
