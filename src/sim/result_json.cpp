#include "sim/result_json.h"

#include "core/units.h"
#include "sched/schedule_json.h"

namespace chorus::sim {

nlohmann::json to_json(const net::Network& network, const CollectiveRun& run, bool with_schedules) {
  using nlohmann::json;
  const auto& s = run.schedule;
  const auto& r = run.result;
  json j;
  j["topology"] = network.name;
  j["shape"] = network.shape();
  j["npus"] = network.num_npus();
  j["op"] = std::string(compact_name(s.op));
  j["size_bytes"] = s.size_bytes;
  j["num_chunks"] = s.num_chunks;
  j["scheduler"] = s.scheduler;
  j["time_ns"] = r.time_ns;
  j["ideal_time_ns"] = r.ideal_time_ns;
  j["avg_bw_utilization"] = r.avg_bw_utilization;
  json dims = json::array();
  for (size_t k = 0; k < network.dims.size(); ++k) {
    const auto& d = network.dims[k];
    const auto& m = r.dims[k];
    dims.push_back({{"index", k},
                    {"kind", std::string(net::to_string(d.kind))},
                    {"size", d.size},
                    {"aggregate_bandwidth_GBps", gbps_to_GBps(d.aggregate_bandwidth_gbps())},
                    {"aggregate_bandwidth_gbps", d.aggregate_bandwidth_gbps()},  // deprecated: Gb/s
                    {"bytes_per_npu", m.bytes_per_npu},
                    {"busy_ns", m.busy_ns},
                    {"active_ns", m.active_ns},
                    {"utilization", m.utilization}});
  }
  j["dims"] = dims;
  if (with_schedules) {
    j["chunks"] = sched::chunks_to_json(s);
    j["dim_order"] = sched::dim_order_to_json(s);
  }
  return j;
}

}  // namespace chorus::sim
