// chorus sim collective | chorus sim topologies
#include <fmt/format.h>
#include <iostream>
#include <optional>

#include "apps/chorus/commands.h"
#include "apps/chorus/sim_collective_run.h"
#include "core/error.h"
#include "core/json_csv.h"
#include "core/memory_budget.h"
#include "core/text_file.h"
#include "core/units.h"
#include "net/degraded.h"
#include "net/network_yaml.h"
#include "net/presets.h"
#include "sched/schedule_json.h"
#include "sim/astra_system.h"
#include "sim/chrome_trace.h"
#include "sim/result_json.h"
#include "sim/run_collective.h"

namespace chorus::cli {
namespace {

struct SimScheduleArgs {
  std::string topology = "3D-SW_SW_SW_homo";
  std::string schedule;
  bool enforce_order = false;
  bool json = false;
  bool schedules = false;
  std::string trace;
};

std::string format_time(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.3f} us", ns / 1e3);
  return fmt::format("{:.1f} ns", ns);
}

void print_human(const net::Network& network, const sim::CollectiveRun& run, bool schedules) {
  const auto& s = run.schedule;
  const auto& r = run.result;
  fmt::print("{} ({}, {} NPUs): {} of {} in {} chunks, scheduler {}\n", network.name, network.shape(),
             network.num_npus(), compact_name(s.op), format_bytes(static_cast<Bytes>(s.size_bytes)), s.num_chunks,
             s.scheduler);
  fmt::print("  time            {}\n  ideal time      {}\n  avg BW util     {:.2f} %\n", format_time(r.time_ns),
             format_time(r.ideal_time_ns), 100 * r.avg_bw_utilization);
  fmt::print("  {:<4} {:<16} {:>6} {:>9} {:>14} {:>12} {:>12} {:>7}\n", "dim", "kind", "size", "BW GB/s", "bytes/NPU",
             "busy", "active", "util");
  for (size_t k = 0; k < network.dims.size(); ++k) {
    const auto& d = network.dims[k];
    const auto& m = r.dims[k];
    fmt::print("  {:<4} {:<16} {:>6} {:>9.4g} {:>14} {:>12} {:>12} {:>6.1f}%\n", k, net::to_string(d.kind), d.size,
               gbps_to_GBps(d.aggregate_bandwidth_gbps()), group_digits(m.bytes_per_npu), format_time(m.busy_ns),
               format_time(m.active_ns), 100 * m.utilization);
  }
  if (schedules) {
    fmt::print("  chunk schedules (dimensions numbered from 0, as in the table, the JSON and schedule files):\n");
    for (size_t c = 0; c < s.chunks.size(); ++c) {
      std::string line;
      for (const auto& st : s.chunks[c].stages) line += fmt::format(" {}{}", coll::to_string(st.phase), st.dim);
      fmt::print("    chunk {:>3}:{}\n", c, line);
    }
  }
}

void report(const net::Network& network, const sim::CollectiveRun& run, bool json, bool schedules,
            const std::string& trace, const std::string& csv = "", const std::string& planned_on = "") {
  const auto with_plan = [&](nlohmann::json j) {
    if (!planned_on.empty()) j["planned_on"] = planned_on;
    return j;
  };
  if (!trace.empty()) write_json_file(trace, sim::chrome_trace(network, run));
  // One row per dimension, the collective's fields repeated (the --json object, flattened).
  if (!csv.empty()) write_text_file(csv, json_to_csv(with_plan(sim::to_json(network, run, false)), "dims", "dim."));
  if (json) {
    std::cout << with_plan(sim::to_json(network, run, schedules)).dump(2) << "\n";
  } else {
    print_human(network, run, schedules);
    if (!planned_on.empty())
      fmt::print("  planned on      {}\n", planned_on == "nominal"
                                               ? "the nominal bandwidths (stale: the schedule does not know "
                                                 "of the degradation)"
                                               : "the degraded bandwidths (re-planned)");
    if (!trace.empty() && trace != "-") fmt::print("  trace written to {} (open in https://ui.perfetto.dev)\n", trace);
  }
}

// The outputs that grow with the chunks, checked against the memory budget before the run
// records or builds them: --json --schedules and --save-schedule (the schedule as JSON), --trace
// (every stage recorded, two trace events each). A table's --schedules is printed line by line.
void require_output_memory(CollectiveKind op, int num_chunks, std::size_t num_dims, bool json, bool schedules,
                           const std::string& save_schedule, const std::string& trace) {
  const double stages = sched::schedule_stages(op, num_chunks, num_dims);
  const auto what = [&](const char* output) {
    return fmt::format("{} of {} chunks ({:.0f} chunk stages)", output, num_chunks, stages);
  };
  if (json && schedules)
    require_memory(sched::schedule_json_bytes(stages), "--schedules", what("the JSON schedules (--json)"));
  if (!save_schedule.empty())
    require_memory(sched::schedule_json_bytes(stages), "--save-schedule", what("the saved schedule"));
  if (!trace.empty()) require_memory(sim::chrome_trace_bytes(stages), "--trace", what("the Chrome trace"));
}

void run_sim_schedule(const SimScheduleArgs& a) {
  const net::Network network = net::load_network(a.topology);
  sim::SimOptions options;
  options.record_stages = !a.trace.empty();
  options.enforce_dim_order = a.enforce_order;
  auto schedule = sched::load_schedule_file(a.schedule, network);
  if (a.enforce_order && schedule.dim_order.empty())
    throw InputError(a.schedule, "--enforce-order needs a 'dim_order' in the schedule");
  require_output_memory(schedule.op, schedule.num_chunks, network.dims.size(), a.json, a.schedules, "", a.trace);
  const auto run = sim::run_schedule(network, std::move(schedule), options);
  report(network, run, a.json, a.schedules, a.trace);
  // (A deadlocking order never gets here: the simulator refuses it, naming the stuck chunks.)
  if (a.enforce_order && !a.json)
    fmt::print("  enforced order: every dimension ran its chunks in the saved dim_order; it does not deadlock\n");
}

void run_sim_collective(const SimCollectiveArgs& a) {
  const auto out = simulate_collective(a);
  if (!a.save_schedule.empty()) write_json_file(a.save_schedule, sched::to_json(out.run.schedule));
  report(out.network, out.run, a.json, a.schedules, a.trace, a.csv, out.planned_on);
}

}  // namespace

// Everything `chorus sim collective` does but its output (`chorus sweep` runs its points here).
SimCollectiveOutcome simulate_collective(const SimCollectiveArgs& a) {
  std::optional<sim::AstraSystem> system;
  if (!a.system.empty()) system = sim::load_astra_system(a.system);
  const net::Network nominal =
      system ? sim::apply_astra_system(net::load_network(a.topology), *system) : net::load_network(a.topology);
  std::vector<net::DimDegradation> degradations;
  for (const auto& d : a.degrade) degradations.push_back(net::parse_dim_degradation(d, "--degrade"));
  net::Network network = net::degrade(nominal, degradations, "--degrade");
  if (a.plan_on != "nominal" && a.plan_on != "actual")
    throw InputError("--plan-on", fmt::format("'{}': expected nominal or actual", a.plan_on));
  if (degradations.empty() && a.plan_on != "actual")
    throw InputError("--plan-on", "needs --degrade (without it the nominal network is the actual one)");
  sim::CollectiveRequest req;
  req.op = coll::parse_collective_op(a.op, "--op");
  req.size_bytes = static_cast<double>(parse_bytes(a.size, "--size"));
  req.num_chunks = system && !a.chunks_given ? system->preferred_dataset_splits : a.chunks;
  req.scheduler = system && !a.scheduler_given ? sim::astra_scheduler(*system) : sched::parse_scheduler(a.scheduler);
  if (!a.save_schedule.empty() && req.scheduler.kind == sched::SchedulerKind::kIdeal)
    throw InputError("--save-schedule",
                     "the ideal is a bound (Themis Table 3), not a chunk schedule: there is "
                     "nothing to save; use --scheduler baseline, themis-fifo or themis-scf");
  if (!(a.threshold_divisor > 0)) throw InputError("--threshold-divisor", "must be positive");
  req.themis.threshold_divisor = a.threshold_divisor;
  sim::SimOptions options;
  options.record_stages = !a.trace.empty();
  if (a.max_chunks_per_dim < 0) throw InputError("--max-chunks-per-dim", "must be >= 0 (0 = no limit)");
  options.max_chunks_per_dim =
      system && !a.max_chunks_given ? system->active_chunks_per_dimension : a.max_chunks_per_dim;
  if (system && !a.max_chunks_given) options.transfers_per_dim = sim::astra_transfers_per_dim(network, *system);
  options.keep_dimension = system.has_value();                   // ASTRA-sim's all-reduce phase on the last dimension
  if (req.num_chunks >= 1 && req.num_chunks <= sim::kMaxChunks)  // else the simulator names --chunks
    require_output_memory(req.op, req.num_chunks, network.dims.size(), a.json, a.schedules, a.save_schedule, a.trace);
  auto run = sim::run_collective_planned_on(a.plan_on == "nominal" ? nominal : network, network, req, options);
  return {std::move(network), std::move(run), degradations.empty() ? "" : a.plan_on};
}

nlohmann::json collective_json(const SimCollectiveOutcome& out, bool schedules) {
  auto j = sim::to_json(out.network, out.run, schedules);
  if (!out.planned_on.empty()) j["planned_on"] = out.planned_on;
  return j;
}

void register_sim_commands(CLI::App& app) {
  auto* sim = app.add_subcommand("sim", "Simulate collectives on multi-dimensional networks");
  sim->require_subcommand(1);

  auto args = std::make_shared<SimCollectiveArgs>();
  auto* coll = sim->add_subcommand("collective", "Simulate one collective split into chunks (Themis model)");
  coll->add_option("-t,--topology", args->topology, "Preset name (see `chorus sim topologies`) or network YAML file")
      ->capture_default_str();
  coll->add_option("--op", args->op, "allreduce | reducescatter | allgather | alltoall")->capture_default_str();
  coll->add_option("-s,--size", args->size, "Collective size per NPU, e.g. 100MB, 1GiB")->capture_default_str();
  coll->add_option("-c,--chunks", args->chunks, "Chunks per collective")->capture_default_str();
  coll->add_option("--scheduler", args->scheduler, "baseline | themis-fifo | themis-scf (or themis) | ideal")
      ->capture_default_str();
  coll->add_option("--threshold-divisor", args->threshold_divisor,
                   "Themis threshold = Latency-Model time of chunkSize/this on the least-loaded dimension")
      ->capture_default_str();
  coll->add_option("--max-chunks-per-dim", args->max_chunks_per_dim,
                   "At most this many chunks on a dimension at once; 0 = no limit (fixed delays overlap)")
      ->capture_default_str();
  coll->add_flag("--json", args->json, "Print one JSON object instead of a table");
  coll->add_flag("--schedules", args->schedules, "Include each chunk's dimension order and the per-dimension order");
  coll->add_option("--trace", args->trace, "Write a Chrome-trace JSON timeline (Perfetto) to this file");
  coll->add_option("--csv", args->csv, "Write the result as CSV, a row per dimension ('-': standard output)");
  coll->add_option("--save-schedule", args->save_schedule,
                   "Write the chunk schedule and per-dimension order as JSON (load it with `chorus sim schedule`)");
  coll->add_option("--degrade", args->degrade,
                   "DIM:FRACTION: run dimension DIM (0-based) at FRACTION of its bandwidth, e.g. 1:0.5 (repeatable)");
  coll->add_option(
          "--plan-on", args->plan_on,
          "With --degrade: schedule on the nominal bandwidths (stale) or the actual, degraded ones (re-planned)")
      ->capture_default_str();
  coll->add_option("--system", args->system,
                   "ASTRA-sim system JSON: its chunks (preferred-dataset-splits), active chunks per dimension, "
                   "FIFO/LIFO, per-dimension algorithms, endpoint delay and local-mem-bw (explicit flags win)");
  coll->callback([args, coll] {
    args->chunks_given = coll->get_option("--chunks")->count() > 0;
    args->scheduler_given = coll->get_option("--scheduler")->count() > 0;
    args->max_chunks_given = coll->get_option("--max-chunks-per-dim")->count() > 0;
    run_sim_collective(*args);
  });

  auto sargs = std::make_shared<SimScheduleArgs>();
  auto* sch = sim->add_subcommand("schedule", "Simulate a saved schedule (JSON from --save-schedule)");
  sch->add_option("schedule", sargs->schedule, "Schedule JSON file")->required();
  sch->add_option("-t,--topology", sargs->topology, "Preset name or network YAML file")->capture_default_str();
  sch->add_flag("--enforce-order", sargs->enforce_order,
                "Run every dimension strictly in the schedule's dim_order (Themis Sec. 4.6.2); reports deadlocks");
  sch->add_flag("--json", sargs->json, "Print one JSON object instead of a table");
  sch->add_flag("--schedules", sargs->schedules, "Include each chunk's dimension order and the per-dimension order");
  sch->add_option("--trace", sargs->trace, "Write a Chrome-trace JSON timeline (Perfetto) to this file");
  sch->callback([sargs] { run_sim_schedule(*sargs); });

  register_sim_workload_command(*sim);
  register_sim_jobs_command(*sim);
  register_sim_whatif_command(*sim);

  auto* topo = sim->add_subcommand("topologies", "List the embedded network presets (Themis Table 2)");
  topo->callback([] {
    fmt::print("{:<22} {:<10} {:>6}  {}\n", "name", "shape", "NPUs", "dims (kind, aggregate GB/s per NPU, latency ns)");
    for (const auto& n : net::presets()) {
      std::string dims;
      for (const auto& d : n.dims)
        dims += fmt::format("[{} {:.4g} {:.0f}] ", net::to_string(d.kind), gbps_to_GBps(d.aggregate_bandwidth_gbps()),
                            d.latency_ns);
      fmt::print("{:<22} {:<10} {:>6}  {}\n", n.name, n.shape(), n.num_npus(), dims);
    }
  });
}

}  // namespace chorus::cli
