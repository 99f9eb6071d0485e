#include "apps/chorus/sweep_points.h"

#include <charconv>
#include <fmt/format.h>

#include "apps/chorus/plan_run.h"
#include "apps/chorus/sim_collective_run.h"
#include "apps/chorus/sim_jobs_run.h"
#include "apps/chorus/sim_workload_run.h"
#include "apps/chorus/topo_run.h"
#include "core/error.h"
#include "core/split.h"
#include "net/network_yaml.h"
#include "sweep/flatten.h"

namespace chorus::cli {
namespace {

using sweep::ParamKind;
using sweep::Point;

// A point's parameters, read into a command's options.
class PointValues {
 public:
  explicit PointValues(const Point& p) : p_(p) {}
  void get(const char* name, std::string& out) const {
    if (const auto* v = find(name)) out = v->text;
  }
  void get(const char* name, int& out) const {
    const auto* v = find(name);
    if (!v) return;
    const char* end = v->text.data() + v->text.size();
    const auto [ptr, ec] = std::from_chars(v->text.data(), end, out);
    if (ec != std::errc() || ptr != end)
      throw InputError(fmt::format("{}: field '{}'", v->at, name), fmt::format("'{}' is not an int", v->text));
  }
  void get(const char* name, double& out) const {
    if (const auto* v = find(name)) out = std::stod(v->text);  // checked as a number by the spec's parser
  }
  void get(const char* name, std::vector<std::string>& out) const {  // a comma list
    if (const auto* v = find(name)) out = split_list(v->text);
  }
  void get(const char* name, bool& out) const {
    if (const auto* v = find(name)) out = v->text == "true" || v->text == "True" || v->text == "yes" || v->text == "on";
  }

 private:
  const sweep::Value* find(const char* name) const {
    const auto it = p_.find(name);
    return it == p_.end() ? nullptr : &it->second;
  }
  const Point& p_;
};

// Runs `fn`; an InputError that names a flag the point sets ("--size") names the spec's line and
// field instead.
template <typename Fn>
nlohmann::ordered_json named_by_spec(const Point& p, Fn&& fn) {
  try {
    return sweep::flatten(nlohmann::ordered_json::parse(fn().dump()));
  } catch (const InputError& e) {
    std::string field = e.where();
    if (field.rfind("--", 0) == 0) field = field.substr(2);
    const auto it = p.find(field);
    if (it == p.end()) throw;
    throw InputError(fmt::format("{}: field '{}'", it->second.at, field), e.detail());
  }
}

nlohmann::ordered_json collective_point(const Point& p) {
  return named_by_spec(p, [&] {
    const PointValues v(p);
    SimCollectiveArgs a;
    v.get("topology", a.topology);
    v.get("op", a.op);
    v.get("size", a.size);
    v.get("chunks", a.chunks);
    v.get("scheduler", a.scheduler);
    v.get("threshold-divisor", a.threshold_divisor);
    v.get("max-chunks-per-dim", a.max_chunks_per_dim);
    std::string degrade;
    v.get("degrade", degrade);
    if (!degrade.empty()) a.degrade = split_list(degrade, ',');
    v.get("plan-on", a.plan_on);
    v.get("system", a.system);
    // What the point sets beats an ASTRA-sim system file's value, as a flag does.
    a.chunks_given = p.count("chunks") > 0;
    a.scheduler_given = p.count("scheduler") > 0;
    a.max_chunks_given = p.count("max-chunks-per-dim") > 0;
    return collective_json(simulate_collective(a), false);
  });
}

nlohmann::ordered_json workload_point(const Point& p) {
  return named_by_spec(p, [&] {
    const PointValues v(p);
    SimWorkloadArgs a;
    v.get("workload", a.workload);
    v.get("topology", a.topology);
    v.get("scheduler", a.scheduler);
    v.get("iterations", a.iterations);
    v.get("chunks", a.chunks);
    v.get("bucket", a.bucket);
    v.get("peak-tflops", a.peak_tflops);
    v.get("memory-bandwidth", a.memory_bandwidth_gbs);
    v.get("speeds", a.speeds);
    v.get("no-dp-overlap", a.no_dp_overlap);
    v.get("tp", a.tp);
    v.get("dp", a.dp);
    v.get("pp", a.pp);
    v.get("microbatches", a.microbatches);
    v.get("pipeline-schedule", a.pipeline_schedule);
    v.get("ns-per-cycle", a.ns_per_cycle);
    v.get("batch-tolerance", a.batch_tolerance);
    v.get("max-chunks-per-dim", a.max_chunks_per_dim);
    v.get("system", a.system);
    v.get("world", a.world);
    v.get("compute-scale", a.compute_scale);
    v.get("grow-groups", a.grow_groups);
    a.scheduler_given = p.count("scheduler") > 0;
    a.chunks_given = p.count("chunks") > 0;
    a.max_chunks_given = p.count("max-chunks-per-dim") > 0;
    if (net::is_fabric_file(a.topology)) return simulate_workload_on_fabric(a).json;
    return simulate_workload_on_dims(a).json;
  });
}

// The command's --json without its per-link rows and per-iteration times (as its jobs.csv).
nlohmann::ordered_json jobs_point(const Point& p) {
  return named_by_spec(p, [&] {
    const PointValues v(p);
    SimJobsArgs a;
    v.get("jobs", a.jobs);
    v.get("fabric", a.fabric);
    v.get("batch-tolerance", a.batch_tolerance);
    v.get("search-shifts", a.search_shifts);
    v.get("shift-steps", a.shifts.steps);
    v.get("shift-rounds", a.shifts.rounds);
    auto j = simulate_jobs(a).json;
    j.erase("links");
    for (auto& job : j["jobs"]) job.erase("iteration_times_ns");
    return j;
  });
}

// The command's --json summary without the search's wall times (search_s): a row is the same on
// every run when the search stops by its evaluations (give a budget it does not reach).
nlohmann::ordered_json plan_point(const Point& p) {
  return named_by_spec(p, [&] {
    const PointValues v(p);
    PlanArgs a;
    a.json = true;  // no progress lines
    v.get("workload", a.workload);
    v.get("topology", a.topology);
    v.get("ranks", a.ranks);
    v.get("launcher", a.launcher);
    v.get("iterations", a.iterations);
    v.get("budget", a.budget);
    int evaluations = static_cast<int>(a.evaluations);
    v.get("evaluations", evaluations);
    a.evaluations = evaluations;
    std::string seed;
    v.get("seed", seed);
    if (!seed.empty()) a.seed = std::stoull(seed);  // checked as an integer by the spec's parser
    v.get("beta", a.beta);
    v.get("baseline", a.baseline);
    v.get("all", a.all);
    v.get("evaluate", a.evaluate);
    if (a.launcher != "launch" && a.launcher != "mpirun")
      throw InputError("--launcher", fmt::format("'{}': expected launch or mpirun", a.launcher));
    auto j = plan_result(a);
    j.erase("search_s");
    if (j.contains("methods"))
      for (auto& m : j["methods"]) m.erase("search_s");
    return j;
  });
}

// The command's --json without its per-link and per-route lists (topology_summary_json).
nlohmann::ordered_json topo_find_point(const Point& p) {
  return named_by_spec(p, [&] {
    const PointValues v(p);
    TopoFindArgs a;
    v.get("workload", a.workload);
    v.get("traffic", a.traffic);
    v.get("servers", a.servers);
    v.get("degree", a.degree);
    v.get("primes", a.primes);
    return topology_summary_json(find_topology(a));
  });
}

// The command's --json: the one fabric's object, or (fabric: all) every fabric's by index.
nlohmann::ordered_json topo_cost_point(const Point& p) {
  return named_by_spec(p, [&] {
    const PointValues v(p);
    TopoCostArgs a;
    v.get("fabric", a.fabric);
    v.get("servers", a.servers);
    v.get("degree", a.degree);
    v.get("bandwidth", a.bandwidth);
    v.get("switch-radix", a.radix);
    auto j = fabric_costs_json(a);
    return j.size() == 1 ? j[0] : j;
  });
}

// The command's --json without the best topology's links and the strategies' per-layer and
// per-server lists (each strategy's key names them).
nlohmann::ordered_json topo_optimize_point(const Point& p) {
  return named_by_spec(p, [&] {
    const PointValues v(p);
    TopoOptimizeArgs a;
    v.get("workload", a.workload);
    v.get("servers", a.servers);
    v.get("degree", a.degree);
    v.get("bandwidth", a.bandwidth);
    v.get("gpus-per-server", a.gpus);
    v.get("iterations", a.iterations);
    v.get("rounds", a.rounds);
    v.get("steps", a.search.max_steps);
    v.get("patience", a.search.patience);
    v.get("temperature", a.search.temperature);
    std::string text;
    v.get("seed", text);
    if (!text.empty()) a.search.seed = std::stoull(text);  // checked as an integer by the spec's parser
    text.clear();
    v.get("mp-choices", text);
    for (const auto& choice : split_list(text, ',')) {
      int n = 0;
      const auto [ptr, ec] = std::from_chars(choice.data(), choice.data() + choice.size(), n);
      if (ec != std::errc() || ptr != choice.data() + choice.size())
        throw InputError("--mp-choices", fmt::format("'{}' is not an int", choice));
      a.search.mp_choices.push_back(n);
    }
    v.get("no-layers", a.no_layers);
    v.get("no-placement", a.no_placement);
    if (a.workload.empty()) throw InputError("--workload", "required");
    auto j = optimize_json(a, optimize_topology(a, {}));
    j["best"]["topology"].erase("edges");
    const auto drop_lists = [](nlohmann::json& strategy) {
      strategy.erase("layer_mp");
      strategy.erase("placement");
    };
    drop_lists(j["own"]["strategy"]);
    drop_lists(j["best"]["strategy"]);
    for (auto& round : j["rounds"]) drop_lists(round["strategy"]);
    return j;
  });
}

}  // namespace

const std::vector<SweepCommand>& sweep_commands() {
  static const std::vector<SweepCommand> commands{
      {{"sim collective",
        {{"topology", ParamKind::kString},
         {"op", ParamKind::kString},
         {"size", ParamKind::kBytes},
         {"chunks", ParamKind::kInt},
         {"scheduler", ParamKind::kString},
         {"threshold-divisor", ParamKind::kDouble},
         {"max-chunks-per-dim", ParamKind::kInt},
         {"degrade", ParamKind::kString},
         {"plan-on", ParamKind::kString},
         {"system", ParamKind::kString}}},
       collective_point},
      {{"sim workload",
        {{"workload", ParamKind::kString},
         {"topology", ParamKind::kString},
         {"scheduler", ParamKind::kString},
         {"iterations", ParamKind::kInt},
         {"chunks", ParamKind::kInt},
         {"bucket", ParamKind::kBytes},
         {"peak-tflops", ParamKind::kDouble},
         {"memory-bandwidth", ParamKind::kDouble},
         {"speeds", ParamKind::kString},
         {"no-dp-overlap", ParamKind::kBool},
         {"tp", ParamKind::kInt},
         {"dp", ParamKind::kInt},
         {"pp", ParamKind::kInt},
         {"microbatches", ParamKind::kInt},
         {"pipeline-schedule", ParamKind::kString},
         {"ns-per-cycle", ParamKind::kDouble},
         {"batch-tolerance", ParamKind::kDouble},
         {"max-chunks-per-dim", ParamKind::kInt},
         {"system", ParamKind::kString},
         {"world", ParamKind::kInt},
         {"grow-groups", ParamKind::kString},
         {"compute-scale", ParamKind::kDouble}}},
       workload_point},
      {{"sim jobs",
        {{"jobs", ParamKind::kString},
         {"fabric", ParamKind::kString},
         {"batch-tolerance", ParamKind::kDouble},
         {"search-shifts", ParamKind::kBool},
         {"shift-steps", ParamKind::kInt},
         {"shift-rounds", ParamKind::kInt}}},
       jobs_point},
      {{"plan",
        {{"workload", ParamKind::kString},
         {"topology", ParamKind::kString},
         {"ranks", ParamKind::kInt},
         {"launcher", ParamKind::kString},
         {"iterations", ParamKind::kInt},
         {"budget", ParamKind::kString},
         {"evaluations", ParamKind::kInt},
         {"seed", ParamKind::kInt},
         {"beta", ParamKind::kDouble},
         {"baseline", ParamKind::kString},
         {"all", ParamKind::kBool},
         {"evaluate", ParamKind::kString}}},
       plan_point},
      {{"topo find",
        {{"workload", ParamKind::kString},
         {"traffic", ParamKind::kString},
         {"servers", ParamKind::kInt},
         {"degree", ParamKind::kInt},
         {"primes", ParamKind::kBool}}},
       topo_find_point},
      {{"topo cost",
        {{"fabric", ParamKind::kString},
         {"servers", ParamKind::kInt},
         {"degree", ParamKind::kInt},
         {"bandwidth", ParamKind::kDouble},
         {"switch-radix", ParamKind::kInt}}},
       topo_cost_point},
      {{"topo optimize",
        {{"workload", ParamKind::kString},
         {"servers", ParamKind::kInt},
         {"degree", ParamKind::kInt},
         {"bandwidth", ParamKind::kDouble},
         {"gpus-per-server", ParamKind::kInt},
         {"iterations", ParamKind::kInt},
         {"rounds", ParamKind::kInt},
         {"steps", ParamKind::kInt},
         {"patience", ParamKind::kInt},
         {"temperature", ParamKind::kDouble},
         {"seed", ParamKind::kInt},
         {"mp-choices", ParamKind::kString},
         {"no-layers", ParamKind::kBool},
         {"no-placement", ParamKind::kBool}}},
       topo_optimize_point},
  };
  return commands;
}

}  // namespace chorus::cli
