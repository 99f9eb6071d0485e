// The plan file (plan_json.h).
#include "syndicate/plan_json.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/text_file.h"

namespace chorus::syndicate {

namespace {

constexpr const char* kFormat = "chorus-syndicate-plan";

nlohmann::json channel_names(const Topology& t, ChannelSet set) {
  auto out = nlohmann::json::array();
  for (std::size_t c = 0; c < t.channels.size(); ++c)
    if (set & (ChannelSet{1} << c)) out.push_back(t.channels[c].name);
  return out;
}

}  // namespace

nlohmann::json plan_to_json(const Problem& problem, const MethodResult& result) {
  const Topology& t = problem.topology;
  nlohmann::json j;
  j["format"] = kFormat;
  j["version"] = 1;
  j["workload"] = problem.dag.name;
  j["topology"] = t.name;
  j["iterations"] = problem.dag.iterations;
  j["method"] = std::string(to_string(result.method));
  j["order"] = std::string(to_string(result.sched.order));
  j["single_stream"] = result.sched.single_stream;
  j["iteration_time_ns"] = result.schedule.iteration_ns;
  j["compute_idle_fraction"] = result.schedule.compute_idle_fraction;
  // Per step: its sequence number and times, from the recorded schedule.
  std::vector<std::vector<const ScheduledStep*>> by_comm(problem.comms.size());
  for (const auto& s : result.schedule.steps) {
    auto& v = by_comm[static_cast<std::size_t>(s.comm)];
    if (v.size() <= static_cast<std::size_t>(s.step)) v.resize(static_cast<std::size_t>(s.step) + 1, nullptr);
    v[static_cast<std::size_t>(s.step)] = &s;
  }
  auto ops = nlohmann::json::array();
  for (std::size_t c = 0; c < problem.comms.size(); ++c) {
    const auto& choice = problem.comms[c];
    const auto& opt = choice.options[static_cast<std::size_t>(result.plan[c])];
    nlohmann::json o;
    o["id"] = c;
    o["node"] = choice.op.node;
    o["name"] = choice.op.name;
    o["kind"] = std::string(to_string(choice.op.kind));
    o["bytes"] = choice.op.bytes;
    o["dims"] = choice.op.dims;
    o["option"] = {{"algorithm", opt.option.algorithm},
                   {"segments", opt.option.segments},
                   {"spline", opt.option.spline},
                   {"path", t.paths[static_cast<std::size_t>(opt.option.path)].name}};
    if (opt.option.alt_path >= 0) {
      o["option"]["alt_path"] = t.paths[static_cast<std::size_t>(opt.option.alt_path)].name;
      o["option"]["alt_segments"] = opt.option.alt_segments;
    }
    auto steps = nlohmann::json::array();
    for (std::size_t s = 0; s < opt.steps.size(); ++s) {
      const Step& st = opt.steps[s];
      nlohmann::json js = {{"kind", std::string(to_string(st.kind))},
                           {"ranks_per_motif", st.group},
                           {"bytes", st.bytes},
                           {"motifs", {st.first_motif, st.motifs}},
                           {"channels", channel_names(t, st.channels)},
                           {"after", st.after},
                           {"duration_ns", st.duration_ns}};
      const auto& rec = by_comm[c];
      if (s < rec.size() && rec[s] != nullptr) {
        js["seq"] = rec[s]->seq;
        js["start_ns"] = rec[s]->start_ns;
        js["end_ns"] = rec[s]->end_ns;
      }
      steps.push_back(js);
    }
    o["steps"] = steps;
    ops.push_back(o);
  }
  j["comm_ops"] = ops;
  return j;
}

LoadedPlan plan_from_json(const Problem& problem, const nlohmann::json& j, const std::string& source) {
  using json_fields::get;
  if (!j.is_object()) throw InputError(source, "a plan file is a JSON object");
  if (get<std::string>(j, "format", source) != kFormat)
    throw InputError(source, fmt::format("field 'format' must be \"{}\"", kFormat));
  if (get<int>(j, "version", source) != 1) throw InputError(source, "field 'version': only version 1 is known");
  const Topology& t = problem.topology;
  const auto check = [&](const char* key, const std::string& want) {
    const auto got = get<std::string>(j, key, source);
    if (got != want) throw InputError(source, fmt::format("field '{}' is '{}', the problem's is '{}'", key, got, want));
  };
  check("workload", problem.dag.name);
  check("topology", t.name);
  if (get<int>(j, "iterations", source) != problem.dag.iterations)
    throw InputError(source, fmt::format("field 'iterations' is {}, the problem unrolls {}", j["iterations"].dump(),
                                         problem.dag.iterations));
  LoadedPlan out;
  const auto order = get<std::string>(j, "order", source);
  bool known = false;
  for (Order o : {Order::kCriticalPath, Order::kFifo, Order::kLifo})
    if (order == to_string(o)) {
      out.sched.order = o;
      known = true;
    }
  if (!known) throw InputError(source, "field 'order' must be critical-path, fifo or lifo, got '" + order + "'");
  out.sched.single_stream = get<bool>(j, "single_stream", source);
  out.iteration_time_ns = get<double>(j, "iteration_time_ns", source);
  const auto& ops = j.contains("comm_ops") ? j["comm_ops"] : nlohmann::json();
  if (!ops.is_array()) throw InputError(source, "field 'comm_ops' must be a list");
  if (ops.size() != problem.comms.size())
    throw InputError(source, fmt::format("field 'comm_ops' has {} entries, the workload {} comm-ops", ops.size(),
                                         problem.comms.size()));
  for (std::size_t c = 0; c < ops.size(); ++c) {
    const auto where = fmt::format("{}: comm_ops[{}]", source, c);
    const auto& choice = problem.comms[c];
    if (get<int>(ops[c], "node", where) != choice.op.node)
      throw InputError(where, fmt::format("field 'node' is {}, the workload's comm-op {} is node {}",
                                          ops[c]["node"].dump(), c, choice.op.node));
    if (!ops[c].contains("option") || !ops[c]["option"].is_object()) throw InputError(where, "missing field 'option'");
    const auto& jo = ops[c]["option"];
    const auto ow = where + ".option";
    PlanOption want;
    want.algorithm = get<std::string>(jo, "algorithm", ow);
    want.segments = get<int>(jo, "segments", ow);
    want.spline = get<int>(jo, "spline", ow);
    // A path the plan names but this topology lacks: often a plan made for `host` with mpi (which
    // only mpirun starts) run under chorus launch, whose `host` has shm and gloo alone.
    const auto missing = [&](const std::string& field, const std::string& name) {
      std::vector<std::string> have;
      for (const auto& p : t.paths) have.push_back(p.name);
      return InputError(
          ow, fmt::format("field '{}': '{}' is not a path of topology '{}' as this job has it (paths: {}){}", field,
                          name, t.name, fmt::join(have, ", "),
                          name == "mpi" ? "; the mpi channel needs ranks started by mpirun: run the plan under "
                                          "mpirun, or plan with a topology without mpi"
                                        : ""));
    };
    const auto path = get<std::string>(jo, "path", ow);
    want.path = t.path_index(path);
    if (want.path < 0) throw missing("path", path);
    if (jo.contains("alt_path")) {
      const auto alt = get<std::string>(jo, "alt_path", ow);
      want.alt_path = t.path_index(alt);
      if (want.alt_path < 0) throw missing("alt_path", alt);
      want.alt_segments = get<int>(jo, "alt_segments", ow);
    }
    int found = -1;
    for (std::size_t o = 0; o < choice.options.size(); ++o)
      if (choice.options[o].option == want) found = static_cast<int>(o);
    if (found < 0)
      throw InputError(ow, fmt::format("'{}' is not an option of comm-op '{}'", describe(want, t), choice.op.name));
    out.plan.push_back(found);
  }
  return out;
}

LoadedPlan read_plan_file(const Problem& problem, const std::string& path) {
  const std::string text = read_text_file(path, "the plan file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path, fmt::format("not JSON (byte {}): {}", e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {  // a number out of range (1e400), ...
    throw InputError(path, fmt::format("not readable JSON: {}", e.what()));
  }
  return plan_from_json(problem, j, path);
}

}  // namespace chorus::syndicate
