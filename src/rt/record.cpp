// The rank's flight record (diagnostics/flight_recorder.h) as the runtime shows it: every
// communicator with its lanes' rings and its members, and dumps on request.
#include <numeric>

#include "rt/runtime_instance.h"

namespace chorus::rt {

std::vector<FlightCommunicatorView> Runtime::flight_views() {
  std::lock_guard lock(mutex_);
  std::vector<FlightCommunicatorView> views;
  for (const auto& [name, c] : communicators_) {
    if (!c) continue;  // destroyed by finalize, or left to a broken backend
    FlightCommunicatorView& v = views.emplace_back();
    v.name = name;
    v.backend = c->backend->name();
    if (auto m = members_.find(name); m != members_.end()) {
      v.ranks = m->second;
    } else {
      v.ranks.resize(static_cast<std::size_t>(world_.size));
      std::iota(v.ranks.begin(), v.ranks.end(), 0);
    }
    v.rank = c->rank;
    v.size = c->world_size;
    for (int l = 0; l < c->lane_count; ++l) v.lanes.push_back(c->lanes[l].ring.get());
    v.label_of = [s = c.get()](CollectiveKind op, std::uint64_t algorithm) { return s->label_of(op, algorithm); };
  }
  return views;
}

std::string Runtime::dump_flight_record(std::string_view reason) { return recorder_->dump(reason, ""); }

}  // namespace chorus::rt
