#include "sim/workload_json.h"

#include "core/units.h"
#include "sim/chrome_trace.h"

#include <algorithm>

#include <fmt/format.h>

namespace chorus::sim {

nlohmann::json to_json(const workload::ParallelLayout& layout) {
  const auto group = [](const workload::ParallelGroup& g) {
    return nlohmann::json{{"npus", g.npus}, {"dims", g.dims}};
  };
  nlohmann::json j{{"tp", group(layout.tp)}, {"dp", group(layout.dp)}, {"pp", group(layout.pp)}};
  if (!layout.ep.dims.empty()) j["ep"] = group(layout.ep);
  if (layout.embeddings) j["embeddings"] = "all NPUs";
  return j;
}

nlohmann::json to_json(const net::Network& network, const workload::Dag& dag, const WorkloadSimOptions& options,
                       const DagResult& r) {
  using nlohmann::json;
  const double it = r.iterations;
  json j;
  j["workload"] = dag.name;
  j["topology"] = network.name;
  j["shape"] = network.shape();
  j["npus"] = network.num_npus();
  j["scheduler"] = options.scheduler.name;
  j["chunks_per_collective"] = options.chunks_per_collective;
  j["iterations"] = r.iterations;
  if (dag.layout) j["layout"] = to_json(*dag.layout);
  j["compute_model"] = {{"peak_tflops", options.compute.peak_tflops},
                        {"memory_bandwidth_GBps", options.compute.memory_bandwidth_gbs},
                        {"memory_bandwidth_gbs", options.compute.memory_bandwidth_gbs}};  // deprecated spelling
  j["iteration_time_ns"] = r.total_ns / it;
  j["compute_ns"] = r.compute_ns / it;
  j["forward_compute_ns"] = r.forward_compute_ns / it;
  j["backward_compute_ns"] = r.backward_compute_ns / it;
  j["optimizer_compute_ns"] = r.optimizer_compute_ns / it;
  j["exposed_comm_ns"] = r.exposed_comm_ns / it;
  j["exposed_dp_comm_ns"] = r.exposed_dp_comm_ns / it;
  j["exposed_mp_comm_ns"] = r.exposed_mp_comm_ns / it;
  j["exposed_pp_comm_ns"] = r.exposed_pp_comm_ns / it;
  j["total_time_ns"] = r.total_ns;
  j["comm_active_ns"] = r.comm_active_ns;
  j["bytes_per_npu"] = r.bytes_per_npu;
  j["avg_bw_utilization"] = r.avg_bw_utilization;
  j["nodes"] = {{"compute", r.compute_nodes}, {"comm", r.comm_nodes}};
  if (!r.stages.empty()) {
    json stages = json::array();
    for (const auto& st : r.stages)
      stages.push_back({{"compute_ns", st.compute_ns / it},
                        {"exposed_dp_comm_ns", st.exposed_dp_comm_ns / it},
                        {"exposed_mp_comm_ns", st.exposed_mp_comm_ns / it},
                        {"exposed_pp_comm_ns", st.exposed_pp_comm_ns / it}});
    j["pipeline_stages"] = stages;
  }
  return j;
}

nlohmann::json to_json(const net::GraphNetwork& fabric, const net::Network& logical, const workload::Dag& dag,
                       const workload::ComputeModel& compute, const FabricRun& run) {
  WorkloadSimOptions options;
  options.compute = compute;
  auto j = to_json(logical, dag, options, run.result);
  j["topology"] = fabric.name;
  j["scheduler"] = "flow-level";
  j.erase("chunks_per_collective");
  j["fabric"] = {{"servers", run.fabric.servers},
                 {"switches", run.fabric.switches},
                 {"links", run.fabric.links.size()},
                 {"server_GBps", gbps_to_GBps(server_bandwidth_gbps(run.fabric))},
                 {"server_gbps", server_bandwidth_gbps(run.fabric)}};  // deprecated: Gb/s
  j["flow_model"] = {
      {"flows", run.flow_count}, {"reallocations", run.flows.reallocations}, {"events", run.flows.events}};
  const auto u = link_utilization(run);
  j["link_utilization"] = {{"mean", u.mean}, {"max", u.max}, {"links_used", u.links_used}};
  return j;
}

nlohmann::json workload_trace(const net::Network& network, const workload::Dag& dag, const WorkloadRun& run) {
  using nlohmann::json;
  json events = json::array();
  auto meta = [&](int pid, int tid, const char* what, const std::string& name) {
    add_trace_name(events, pid, tid, what, name);
  };
  // Pipeline stages: a compute track and communication tracks per stage, and a dimensions
  // process per stage (each stage's NPUs have their own links).
  const bool staged = dag.stages > 1;
  auto stage_name = [&](int s, const std::string& what) { return staged ? fmt::format("stage {} {}", s, what) : what; };
  meta(0, -1, "process_name", "compute");
  for (int s = 0; s < dag.stages; ++s) meta(0, s, "thread_name", stage_name(s, "compute stream"));
  meta(1, -1, "process_name", "communication");
  for (int s = 0; s < dag.stages; ++s) add_dimension_tracks(events, network, 2 + s, stage_name(s, "dimensions"));
  // Communication tracks: per stage, when each becomes free; tid = track x stages + stage.
  std::vector<std::vector<double>> track_free(static_cast<size_t>(dag.stages));
  const auto& timing = run.result.nodes;
  for (size_t i = 0; i < dag.nodes.size(); ++i) {
    const auto& n = dag.nodes[i];
    const auto& t = timing[i];
    if (n.kind == workload::NodeKind::kCompute) {
      if (t.end_ns <= t.start_ns) continue;
      events.push_back({{"ph", "X"},
                        {"pid", 0},
                        {"tid", n.stage},
                        {"name", n.name},
                        {"cat", std::string(workload::to_string(n.compute))},
                        {"ts", t.start_ns / 1e3},
                        {"dur", (t.end_ns - t.start_ns) / 1e3},
                        {"args", {{"iteration", n.iteration}}}});
      continue;
    }
    auto& free = track_free[static_cast<size_t>(n.stage)];
    size_t track = 0;
    while (track < free.size() && free[track] > t.start_ns) ++track;
    const int tid = static_cast<int>(track) * dag.stages + n.stage;
    if (track == free.size()) {
      free.push_back(0);
      meta(1, tid, "thread_name", stage_name(n.stage, fmt::format("collectives {}", track)));
    }
    free[track] = t.end_ns;
    events.push_back({{"ph", "X"},
                      {"pid", 1},
                      {"tid", tid},
                      {"name", n.name},
                      {"cat", std::string(workload::to_string(n.group))},
                      {"ts", t.start_ns / 1e3},
                      {"dur", (t.end_ns - t.start_ns) / 1e3},
                      {"args", {{"op", std::string(compact_name(n.op))}, {"bytes", n.bytes}, {"dims", n.dims}}}});
  }
  for (const auto& s : run.stages) {
    const auto& n = dag.nodes[static_cast<size_t>(s.collective)];
    const std::string phase(coll::to_string(s.phase));
    events.push_back({{"ph", "X"},
                      {"pid", 2 + n.stage},
                      {"tid", s.dim},
                      {"name", fmt::format("{} c{} {}", n.name, s.chunk, phase)},
                      {"cat", phase},
                      {"ts", s.start_ns / 1e3},
                      {"dur", (s.end_ns - s.start_ns) / 1e3},
                      {"args", {{"bytes_per_npu", s.bytes_sent}, {"arrive_us", s.arrive_ns / 1e3}}}});
  }
  return json{{"traceEvents", events}, {"displayTimeUnit", "ns"}};
}

}  // namespace chorus::sim
