#include "syndicate/plan_trace.h"

#include <fmt/format.h>

namespace chorus::syndicate {

namespace {

// A trace-event metadata record naming process `pid` (tid < 0) or its thread `tid`.
void name_track(nlohmann::json& events, int pid, int tid, const char* what, const std::string& name) {
  nlohmann::json e{{"ph", "M"}, {"pid", pid}, {"name", what}, {"args", {{"name", name}}}};
  if (tid >= 0) e["tid"] = tid;
  events.push_back(std::move(e));
}

}  // namespace

nlohmann::json plan_trace(const Problem& p, const PlanChoice& plan, const Schedule& schedule) {
  auto events = nlohmann::json::array();
  constexpr int kCompute = 1, kChannels = 2;
  name_track(events, kCompute, -1, "process_name", "compute");
  name_track(events, kCompute, 0, "thread_name", "compute stream");
  name_track(events, kChannels, -1, "process_name", "channels");
  for (std::size_t c = 0; c < p.topology.channels.size(); ++c)
    name_track(events, kChannels, static_cast<int>(c), "thread_name", p.topology.channels[c].name);
  auto slice = [&](int pid, int tid, const std::string& name, double start_ns, double end_ns, nlohmann::json args) {
    events.push_back({{"ph", "X"},
                      {"pid", pid},
                      {"tid", tid},
                      {"name", name},
                      {"ts", start_ns / 1e3},
                      {"dur", (end_ns - start_ns) / 1e3},
                      {"args", std::move(args)}});
  };
  for (std::size_t n = 0; n < p.dag.nodes.size(); ++n) {
    if (p.comm_of_node[n] >= 0 || p.compute_ns[n] <= 0) continue;
    const double end = schedule.node_end_ns[n];
    slice(kCompute, 0, p.dag.nodes[n].name, end - p.compute_ns[n], end, {{"node", n}});
  }
  for (const auto& s : schedule.steps) {
    const auto& choice = p.comms[static_cast<std::size_t>(s.comm)];
    const auto& opt = choice.options[static_cast<std::size_t>(plan[static_cast<std::size_t>(s.comm)])];
    const auto& st = opt.steps[static_cast<std::size_t>(s.step)];
    const auto name = fmt::format("#{} {} {}", s.seq, choice.op.name, coll::motif::short_name(st.kind));
    for (std::size_t c = 0; c < p.topology.channels.size(); ++c)
      if (st.channels & (ChannelSet{1} << c))
        slice(kChannels, static_cast<int>(c), name, s.start_ns, s.end_ns,
              {{"seq", s.seq},
               {"comm_op", choice.op.name},
               {"step", s.step},
               {"option", describe(opt.option, p.topology)},
               {"ranks_per_motif", st.group},
               {"bytes", st.bytes}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace chorus::syndicate
