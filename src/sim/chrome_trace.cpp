#include "sim/chrome_trace.h"

#include <fmt/format.h>

#include "core/units.h"

namespace chorus::sim {

void add_trace_name(nlohmann::json& events, int pid, int tid, const char* what, const std::string& name) {
  nlohmann::json e{{"ph", "M"}, {"pid", pid}, {"name", what}, {"args", {{"name", name}}}};
  if (tid >= 0) e["tid"] = tid;
  events.push_back(std::move(e));
}

void add_dimension_tracks(nlohmann::json& events, const net::Network& network, int pid, const std::string& name) {
  add_trace_name(events, pid, -1, "process_name", name);
  for (size_t k = 0; k < network.dims.size(); ++k) {
    const auto& d = network.dims[k];
    add_trace_name(events, pid, static_cast<int>(k), "thread_name",
                   fmt::format("dim{} {} x{} {:.4g} GB/s", k, net::to_string(d.kind), d.size,
                               gbps_to_GBps(d.aggregate_bandwidth_gbps())));
  }
}

double chrome_trace_bytes(double stages) { return 7000.0 * stages; }

nlohmann::json chrome_trace(const net::Network& network, const CollectiveRun& run) {
  using nlohmann::json;
  json events = json::array();
  add_dimension_tracks(events, network, 0);
  add_trace_name(events, 1, -1, "process_name", "chunks");
  for (int c = 0; c < run.schedule.num_chunks; ++c)
    add_trace_name(events, 1, c, "thread_name", fmt::format("chunk {}", c));
  // Trace timestamps are microseconds.
  for (const auto& s : run.result.stages) {
    const std::string phase(coll::to_string(s.phase));
    events.push_back(
        {{"ph", "X"},
         {"pid", 0},
         {"tid", s.dim},
         {"name", fmt::format("c{} {}", s.chunk, phase)},
         {"cat", phase},
         {"ts", s.start_ns / 1e3},
         {"dur", (s.end_ns - s.start_ns) / 1e3},
         {"args", {{"chunk", s.chunk}, {"bytes_per_npu", s.bytes_sent}, {"arrive_us", s.arrive_ns / 1e3}}}});
    events.push_back({{"ph", "X"},
                      {"pid", 1},
                      {"tid", s.chunk},
                      {"name", fmt::format("{} dim{}", phase, s.dim + 1)},
                      {"cat", phase},
                      {"ts", s.arrive_ns / 1e3},
                      {"dur", (s.end_ns - s.arrive_ns) / 1e3},
                      {"args", {{"wait_us", (s.start_ns - s.arrive_ns) / 1e3}}}});
  }
  return json{{"traceEvents", events}, {"displayTimeUnit", "ns"}};
}

}  // namespace chorus::sim
