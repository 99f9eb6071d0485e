#include "sim/result_json.h"

namespace chorus::sim {

nlohmann::json to_json(const net::Network& network, const CollectiveRun& run, bool with_schedules) {
  using nlohmann::json;
  const auto& s = run.schedule;
  const auto& r = run.result;
  json j;
  j["topology"] = network.name;
  j["shape"] = network.shape();
  j["npus"] = network.num_npus();
  j["op"] = std::string(coll::to_string(s.op));
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
                    {"aggregate_bandwidth_gbps", d.aggregate_bandwidth_gbps()},
                    {"bytes_per_npu", m.bytes_per_npu},
                    {"busy_ns", m.busy_ns},
                    {"active_ns", m.active_ns},
                    {"utilization", m.utilization}});
  }
  j["dims"] = dims;
  if (with_schedules) {
    json chunks = json::array();
    for (size_t c = 0; c < s.chunks.size(); ++c) {
      json cj{{"chunk", c}};
      if (s.op == coll::CollectiveOp::kAllToAll) {
        cj["a2a_order"] = s.chunks[c].order(coll::Phase::kAllToAll);
      } else {
        cj["rs_order"] = s.chunks[c].order(coll::Phase::kReduceScatter);
        cj["ag_order"] = s.chunks[c].order(coll::Phase::kAllGather);
      }
      chunks.push_back(cj);
    }
    j["chunks"] = chunks;
    json order = json::array();
    for (const auto& ops : s.dim_order) {
      json dj = json::array();
      for (const auto& op : ops) dj.push_back({{"chunk", op.chunk}, {"phase", std::string(coll::to_string(op.phase))}});
      order.push_back(dj);
    }
    j["dim_order"] = order;
  }
  return j;
}

}  // namespace chorus::sim
