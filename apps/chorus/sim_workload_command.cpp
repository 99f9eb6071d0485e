// chorus sim workload
#include <fmt/format.h>
#include <iostream>

#include "apps/chorus/commands.h"
#include "apps/chorus/sim_workload_run.h"
#include "apps/chorus/terminal_progress.h"
#include "apps/chorus/workload_dag_args.h"
#include "capture/measured_channel.h"
#include "core/error.h"
#include "core/json_csv.h"
#include "core/memory_budget.h"
#include "core/json_fields.h"
#include "core/text_file.h"
#include "core/units.h"
#include "net/graph/graph_yaml.h"
#include "net/network_yaml.h"
#include "sim/astra_system.h"
#include "sim/dag_executor.h"
#include "sim/flow/flow_model.h"
#include "sim/run_collective.h"
#include "sim/flow/traffic.h"
#include "sim/flow_network.h"
#include "sim/stragglers.h"
#include "sim/workload_json.h"
#include "syndicate/plan_json.h"
#include "syndicate/plan_trace.h"
#include "syndicate/workloads.h"
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>

#include "workload/capture/capture_import.h"
#include "workload/capture/capture_manifest.h"
#include "workload/compute_scale.h"
#include "workload/load.h"
#include "workload/parallelism.h"
#include "workload/pytorch_eg.h"
#include "workload/workload_yaml.h"

namespace chorus::cli {
namespace {

std::string ms(double ns) { return fmt::format("{:.3f} ms", ns / 1e6); }

bool pipeline_given(const WorkloadDagArgs& a) {
  return a.pp != 0 || a.microbatches != 0 || !a.pipeline_schedule.empty();
}

// A zoo model or workload YAML with the command's iterations, bucket and overlap applied.
workload::ZooEntry model_entry(const WorkloadDagArgs& a) {
  auto entry = workload::load_workload(a.workload);
  entry.parallelism.iterations = a.iterations;
  if (!a.bucket.empty()) entry.parallelism.bucket_bytes = static_cast<double>(parse_bytes(a.bucket, "--bucket"));
  if (a.no_dp_overlap) entry.parallelism.overlap_dp = false;
  if (a.pp < 0) throw InputError("--pp", fmt::format("must be >= 1, got {}", a.pp));
  if (a.microbatches < 0) throw InputError("--microbatches", fmt::format("must be >= 1, got {}", a.microbatches));
  entry.parallelism.compute.peak_tflops = a.peak_tflops;  // the pipeline's stages are balanced for it
  entry.parallelism.compute.memory_bandwidth_gbs = a.memory_bandwidth_gbs;
  if (a.tp < 0) throw InputError("--tp", fmt::format("must be >= 1, got {}", a.tp));
  if (a.dp < 0) throw InputError("--dp", fmt::format("must be >= 1, got {}", a.dp));
  if (a.tp > 0) entry.parallelism.tp = a.tp;
  if (a.dp > 0) entry.parallelism.dp = a.dp;
  if (a.pp > 0) entry.parallelism.pp_stages = a.pp;
  if (a.microbatches > 0) entry.parallelism.microbatches = a.microbatches;
  if (!a.pipeline_schedule.empty())
    entry.parallelism.pipeline_schedule = workload::parse_pipeline_schedule(a.pipeline_schedule, "--pipeline-schedule");
  return entry;
}

// The model's parallel layout on `network`, checked: errors name the flags given, else the workload
// file's fields.
workload::ParallelLayout checked_layout(const WorkloadDagArgs& a, const workload::ZooEntry& entry,
                                        const net::Network& network) {
  workload::check_groups_fit(entry, network);
  auto fields = workload::layout_fields(entry);
  if (a.tp > 0) fields.tp = "--tp";
  if (a.dp > 0) fields.dp = "--dp";
  if (a.pp > 0) fields.pp = "--pp";
  return workload::parallel_layout(entry.model, entry.parallelism, network, fields);
}

// Chakra traces and execution graphs: say so when the recorded job's world is not the network's
// NPUs, and when an execution graph has no compute to simulate.
void warn_about_import(const WorkloadDagArgs& a, const workload::LoadedWorkload& loaded, const net::Network& network) {
  const bool graph = loaded.format == workload::WorkloadFormat::kExecutionGraph;
  if (loaded.format == workload::WorkloadFormat::kCapture) {
    if (a.world == 0 && static_cast<std::uint64_t>(loaded.ranks) != network.num_npus())
      fmt::print(stderr,
                 "chorus: warning: simulating a {}-rank capture on {} NPUs ({}): every NPU runs the loaded rank's "
                 "window, and the whole world's collectives span all dimensions; for the captured job, give "
                 "--topology host or a topology of {} NPUs; --world {} scales the capture to this one\n",
                 loaded.ranks, network.num_npus(), network.shape(), loaded.ranks, network.num_npus());
    return;
  }
  if (loaded.ranks >= 2 && static_cast<std::uint64_t>(loaded.ranks) != network.num_npus()) {
    const std::string spans =
        graph ? (a.collective_dims.empty() ? "every collective spans all of them (all dimensions; --collective-dims "
                                             "places a collective's group on some)"
                                           : "each collective spans the dimensions --collective-dims gives")
              : "each collective spans the dimensions its involved_dim selects (all of them without it)";
    fmt::print(stderr,
               "chorus: warning: simulating a {}-rank {} on {} NPUs ({}): every NPU runs the loaded rank's {}, and {}; "
               "for the recorded job, give a topology of {} NPUs (a network YAML)\n",
               loaded.ranks, workload::to_string(loaded.format), network.num_npus(), network.shape(),
               graph ? "graph" : "trace", spans, loaded.ranks);
  }
  if (graph && a.profile_trace.empty()) {
    bool compute = false, flops = false;
    for (const auto& n : loaded.dag.nodes)
      if (n.kind == workload::NodeKind::kCompute) {
        compute = true;
        flops = flops || n.flops > 0;
      }
    if (compute && !flops)
      fmt::print(stderr,
                 "chorus: warning: {}: no operator has FLOPs chorus counts (matmul and convolution families), so "
                 "compute is only the time to move the operators' tensors at --memory-bandwidth; for measured "
                 "durations, record a torch profiler trace of the same window and rank and pass it with "
                 "--profile-trace\n",
                 loaded.file);
  }
}

}  // namespace

net::Network workload_network(const std::string& topology, const std::string& workload, int world) {
  if (topology != "host") return net::load_network(topology);
  if (!workload::capture::is_capture_dir(workload))
    throw InputError("--topology",
                     "host is this machine's model for a chorus capture's ranks and backend: give the "
                     "capture's directory with --workload (docs/capture.md)");
  const auto m = workload::capture::read_manifest(workload);
  return capture::capture_host_network(m, world > 0 ? world : m.world, "--topology");
}

void add_what_if_options(CLI::App& cmd, WorkloadDagArgs& args) {
  cmd.add_option("--world", args.world,
                 "Captures: the capture replicated to this many ranks (a multiple of its own; the topology must "
                 "have as many NPUs): collectives on its whole world span all of them, a sub-group keeps its size, "
                 "tiled, unless --grow-groups names it (docs/capture.md)")
      ->check(CLI::Range(1, 1 << 24));
  cmd.add_option("--grow-groups", args.grow_groups,
                 "Captures with --world: the sub-groups that grow with the world, comma-separated, by the labels the "
                 "import lists (torch/3): each becomes the union of its images in every copy")
      ->delimiter(',');
  cmd.add_option("--compute-scale", args.compute_scale,
                 "Every compute node this many times as fast (2: compute durations halved); > 0")
      ->capture_default_str();
}

// --world and --compute-scale, checked before any work.
static void check_what_if(const WorkloadDagArgs& a, workload::WorkloadFormat format) {
  if (a.world < 0) throw InputError("--world", fmt::format("must be >= 1, got {}", a.world));
  if (a.world > 0 && format != workload::WorkloadFormat::kCapture)
    throw InputError("--world",
                     "applies to chorus captures (a directory with manifest.json); a model's world is "
                     "its network's NPUs");
  if (!a.grow_groups.empty() && a.world == 0)
    throw InputError("--grow-groups", "applies with --world (a capture replicated to a larger world)");
  if (!(a.compute_scale > 0) || !std::isfinite(a.compute_scale))
    throw InputError("--compute-scale",
                     fmt::format("must be a positive number (2 = compute twice as fast), got {}", a.compute_scale));
}

static workload::Dag make_workload_dag_unscaled(const WorkloadDagArgs& a, const net::Network& network);

workload::Dag make_workload_dag(const WorkloadDagArgs& a, const net::Network& network) {
  auto dag = make_workload_dag_unscaled(a, network);
  workload::scale_compute(dag, a.compute_scale, "--compute-scale");
  return dag;
}

static workload::Dag make_workload_dag_unscaled(const WorkloadDagArgs& a, const net::Network& network) {
  if (a.rank < -1) throw InputError("--rank", fmt::format("must be >= 0, got {}", a.rank));
  const auto format = workload::format_of(a.workload, a.rank);
  check_what_if(a, format);
  if (format == workload::WorkloadFormat::kCapture && (!a.profile_trace.empty() || !a.collective_dims.empty()))
    throw InputError(a.profile_trace.empty() ? "--collective-dims" : "--profile-trace",
                     "a chorus capture holds its ranks' profiler traces and its collectives' groups");
  if (format != workload::WorkloadFormat::kChakra && format != workload::WorkloadFormat::kCapture) {
    if (a.rank != -1) throw InputError("--rank", "applies to Chakra traces (name.<rank>.et) and captures only");
    if (a.chakra_skip_unsupported || a.chakra_ctrl_deps)
      throw InputError(a.chakra_ctrl_deps ? "--chakra-ctrl-deps" : "--chakra-skip-unsupported",
                       "applies to Chakra traces (name.<rank>.et) only");
  }
  if (a.check_ranks && (format == workload::WorkloadFormat::kModel || format == workload::WorkloadFormat::kAstraText))
    throw InputError("--check-ranks", "applies to Chakra traces and PyTorch execution graphs (one file per rank)");
  if (format != workload::WorkloadFormat::kExecutionGraph && format != workload::WorkloadFormat::kCapture &&
      (!a.profile_trace.empty() || !a.collective_dims.empty()))
    throw InputError(a.profile_trace.empty() ? "--collective-dims" : "--profile-trace",
                     "applies to PyTorch execution graphs only");
  if (format != workload::WorkloadFormat::kModel) {
    if (a.tp > 0 || a.dp > 0)
      throw InputError(a.tp > 0 ? "--tp" : "--dp",
                       fmt::format("applies to model zoo names and workload YAML files; a {}'s collectives carry their "
                                   "own groups",
                                   workload::to_string(format)));
    if (!a.bucket.empty() || a.no_dp_overlap || pipeline_given(a))
      throw InputError(a.workload, fmt::format("--bucket, --no-dp-overlap and the pipeline options do not apply to {}s",
                                               workload::to_string(format)));
    workload::LoadOptions o;
    o.iterations = a.iterations;
    o.ns_per_cycle = a.ns_per_cycle;
    o.rank = a.rank;
    o.skip_unsupported = a.chakra_skip_unsupported;
    o.ctrl_deps = a.chakra_ctrl_deps;
    o.check_ranks = a.check_ranks;
    o.profiler_trace = a.profile_trace;
    o.collective_dims = workload::parse_collective_dims(a.collective_dims, "--collective-dims");
    o.world = a.world;
    o.world_field = "--world";
    o.grow_groups = a.grow_groups;
    o.grow_field = "--grow-groups";
    auto loaded = workload::load(a.workload, network, o, "--workload");
    if (!loaded.notes.empty()) fmt::print(stderr, "chorus: {}: {}\n", loaded.file, loaded.notes);
    warn_about_import(a, loaded, network);
    return std::move(loaded.dag);
  }
  const auto entry = model_entry(a);
  if (a.pp > 0) workload::pipeline_dims(network, a.pp, "--pp");  // names the flag, not the config field
  checked_layout(a, entry, network);
  // Each micro-batch runs every layer forward and backward, with its communication: about three
  // nodes per layer and micro-batch per iteration, each about 300 bytes with its timing.
  const double nodes = 3.0 * static_cast<double>(entry.model.layers.size() + 1) * entry.parallelism.iterations *
                       std::max(1, workload::effective_microbatches(entry.parallelism));
  require_memory(300 * nodes, a.microbatches > 0 ? "--microbatches" : "--iterations",
                 fmt::format("a training DAG of about {:.3g} nodes", nodes));
  return workload::build_training_dag(entry.model, entry.parallelism, network);
}

namespace {

// --plan: a SYNDICATE plan file re-simulated by optSched on its workload and topology
// (docs/syndicate.md); --workload / --topology, when given, override the names in the file.
void run_sim_plan(const SimWorkloadArgs& a, bool workload_given, bool topology_given) {
  if (!a.system.empty()) throw InputError("--system", "applies to dimension networks, not to --plan");
  if (a.max_chunks_given) throw InputError("--max-chunks-per-dim", "applies to dimension networks, not to --plan");
  const std::string text = read_text_file(a.plan, "the --plan file");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // a syntax error, a number out of range (1e400), ...
    throw InputError(a.plan, fmt::format("not JSON: {}", e.what()));
  }
  const auto workload = workload_given ? a.workload : json_fields::get<std::string>(j, "workload", a.plan);
  const auto topology = topology_given ? a.topology : json_fields::get<std::string>(j, "topology", a.plan);
  const auto topo = syndicate::load_topology(topology, 4, "--topology");
  const auto dag = syndicate::load_workload_dag(workload, topo, json_fields::get<int>(j, "iterations", a.plan));
  const auto problem = syndicate::make_problem(dag, topo, {});
  const auto loaded = syndicate::plan_from_json(problem, j, a.plan);
  syndicate::Scheduler scheduler(problem);
  const auto sched = scheduler.run(loaded.plan, loaded.sched, true);
  if (!a.trace.empty()) write_text_file(a.trace, syndicate::plan_trace(problem, loaded.plan, sched).dump() + "\n");
  const double it = dag.iterations;
  if (a.json) {
    nlohmann::json out{{"workload", dag.name},
                       {"topology", topo.name},
                       {"plan", a.plan},
                       {"order", std::string(syndicate::to_string(loaded.sched.order))},
                       {"iteration_time_ns", sched.iteration_ns},
                       {"plan_iteration_time_ns", loaded.iteration_time_ns},
                       {"compute_ns", sched.compute_busy_ns / it},
                       {"compute_idle_fraction", sched.compute_idle_fraction},
                       {"steps", sched.steps.size()}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  fmt::print("{} on {} ({} NPUs), SYNDICATE plan {} ({} order), {} iterations\n", dag.name, topo.name, topo.npus(),
             a.plan, syndicate::to_string(loaded.sched.order), dag.iterations);
  fmt::print("  per iteration:\n");
  fmt::print("    iteration time      {}  (the plan file: {})\n", ms(sched.iteration_ns), ms(loaded.iteration_time_ns));
  fmt::print("    compute             {}\n", ms(sched.compute_busy_ns / it));
  fmt::print("    compute idle        {:.1f} %\n", 100 * sched.compute_idle_fraction);
  fmt::print("  {} motif steps in sequence order\n", sched.steps.size());
  if (!a.trace.empty()) fmt::print("  trace written to {} (open in https://ui.perfetto.dev)\n", a.trace);
}

void check_common(const SimWorkloadArgs& a) {
  require_range(a.iterations, 1, workload::kMaxTrainingIterations, "--iterations");
  if (!(a.ns_per_cycle > 0)) throw InputError("--ns-per-cycle", "must be positive");
  require_range(a.chunks, 1, sim::kMaxChunksOfMany, "--chunks");
  if (!(a.peak_tflops > 0)) throw InputError("--peak-tflops", "must be positive");
  if (!(a.memory_bandwidth_gbs > 0)) throw InputError("--memory-bandwidth", "must be positive");
}

void print_per_iteration(const sim::DagResult& r) {
  const double it = r.iterations;
  fmt::print("  DAG: {} compute + {} communication nodes\n", r.compute_nodes, r.comm_nodes);
  fmt::print("  per iteration{}:\n",
             r.stages.empty() ? "" : fmt::format(" (mean of the {} pipeline stages)", r.stages.size()));
  fmt::print("    iteration time      {}\n", ms(r.total_ns / it));
  fmt::print("    forward compute     {}\n", ms(r.forward_compute_ns / it));
  fmt::print("    backward compute    {}\n", ms(r.backward_compute_ns / it));
  fmt::print("    exposed DP comm     {}\n", ms(r.exposed_dp_comm_ns / it));
  fmt::print("    exposed MP comm     {}\n", ms(r.exposed_mp_comm_ns / it));
  if (r.stages.empty()) return;
  fmt::print("    exposed pipeline    {}  (bubble and stage-to-stage transfers)\n", ms(r.exposed_pp_comm_ns / it));
  fmt::print("  per stage: {:>5} {:>12} {:>12} {:>12} {:>12}\n", "stage", "compute", "exposed DP", "exposed MP",
             "pipeline");
  for (size_t s = 0; s < r.stages.size(); ++s) {
    const auto& st = r.stages[s];
    fmt::print("             {:>5} {:>12} {:>12} {:>12} {:>12}\n", s, ms(st.compute_ns / it),
               ms(st.exposed_dp_comm_ns / it), ms(st.exposed_mp_comm_ns / it), ms(st.exposed_pp_comm_ns / it));
  }
}

// --topology FABRIC.yaml: the DAG on a graph fabric through the flow-level model
// (docs/graph-networks.md, "The training DAG on a fabric").
void run_sim_workload_on_fabric(const SimWorkloadArgs& a) {
  const auto out = simulate_workload_on_fabric(a);
  const auto& [fabric, logical, dag, run, result] = out;
  if (!a.trace.empty()) write_json_file(a.trace, sim::workload_trace(logical, dag, sim::WorkloadRun{run.result, {}}));
  if (!a.traffic_csv.empty()) {
    std::ostringstream csv;
    sim::flow::write_matrix_csv(csv, run.traffic);
    write_text_file(a.traffic_csv, csv.str());
  }
  if (!a.csv.empty()) write_text_file(a.csv, json_to_csv(result));
  if (a.json) {
    std::cout << result.dump(2) << "\n";
    return;
  }
  fmt::print("{} on fabric {} ({} servers, {} links, {:.4g} GB/s per server), flow-level model, {} iterations\n",
             dag.name, fabric.name, fabric.servers, run.fabric.links.size(),
             gbps_to_GBps(sim::server_bandwidth_gbps(run.fabric)), run.result.iterations);
  fmt::print("  logical network of the DAG: {}\n", logical.shape());
  if (dag.layout) fmt::print("  parallel layout: {}\n", workload::to_string(*dag.layout));
  print_per_iteration(run.result);
  const auto u = sim::link_utilization(run);
  fmt::print("  flows: {}, rate reallocations: {}; link utilization mean {:.1f} %, max {:.1f} %\n", run.flow_count,
             run.flows.reallocations, 100 * u.mean, 100 * u.max);
  if (!a.trace.empty()) fmt::print("  trace written to {} (open in https://ui.perfetto.dev)\n", a.trace);
  if (!a.traffic_csv.empty()) fmt::print("  traffic matrix written to {}\n", a.traffic_csv);
}

void run_sim_workload(const SimWorkloadArgs& a) {
  check_common(a);
  if (net::is_fabric_file(a.topology)) return run_sim_workload_on_fabric(a);
  TerminalProgress progress("simulating the training DAG's nodes");
  const auto out =
      simulate_workload_on_dims(a, [&progress](std::size_t done, std::size_t total) { progress.update(done, total); });
  const auto& network = out.network;
  const auto& dag = out.dag;
  const auto& options = out.options;
  const auto& run = out.run;
  if (!a.trace.empty()) {
    write_json_file(a.trace, sim::workload_trace(network, dag, run));
  }
  if (!a.csv.empty()) write_text_file(a.csv, json_to_csv(out.json));
  if (a.json) {
    std::cout << out.json.dump(2) << "\n";
    return;
  }
  const auto& r = run.result;
  fmt::print("{} on {} ({}, {} NPUs), scheduler {}, {} iterations, {} chunks per collective\n", dag.name, network.name,
             network.shape(), network.num_npus(), options.scheduler.name, r.iterations, options.chunks_per_collective);
  if (dag.layout) fmt::print("  parallel layout: {}\n", workload::to_string(*dag.layout));
  print_per_iteration(r);
  fmt::print("  avg BW utilization while communicating: {:.2f} %\n", 100 * r.avg_bw_utilization);
  if (!a.trace.empty()) fmt::print("  trace written to {} (open in https://ui.perfetto.dev)\n", a.trace);
}

}  // namespace

// Everything `chorus sim workload` does on a fabric (the flow-level model) but its output.
SimWorkloadFabricOutcome simulate_workload_on_fabric(const SimWorkloadArgs& a) {
  check_common(a);
  auto fabric = net::load_fabric_yaml(a.topology);
  if (!a.system.empty())
    throw InputError("--system", "applies to dimension networks; a fabric runs the flow-level model");
  if (a.max_chunks_given)
    throw InputError("--max-chunks-per-dim", "applies to dimension networks; a fabric runs the flow-level model");
  if (a.scheduler_given)
    throw InputError("--scheduler", "applies to dimension networks; a fabric runs the flow-level model");
  if (a.chunks_given) throw InputError("--chunks", "applies to dimension networks; a fabric runs the flow-level model");
  const auto format = workload::format_of(a.workload);
  if (a.chakra_skip_unsupported || a.chakra_ctrl_deps || a.check_ranks || !a.profile_trace.empty() ||
      !a.collective_dims.empty() ||
      (format != workload::WorkloadFormat::kModel && format != workload::WorkloadFormat::kCapture) ||
      (a.rank != -1 && format != workload::WorkloadFormat::kCapture))
    throw InputError(
        a.workload,
        "a fabric (--topology with a 'fabric:' file) takes model zoo names, workload YAML files and chorus "
        "captures; Chakra traces, ASTRA-sim files and execution graphs carry a dimension network of their "
        "own");
  if (!a.speeds.empty())
    throw InputError("--speeds",
                     "applies to dimension networks; on a fabric, give a job's speeds in `chorus sim jobs` "
                     "(docs/shared-fabric.md)");
  workload::ComputeModel compute;
  compute.peak_tflops = a.peak_tflops;
  compute.memory_bandwidth_gbs = a.memory_bandwidth_gbs;
  sim::flow::check_batch_tolerance(a.batch_tolerance);
  sim::FlowNetworkOptions flow_options;
  flow_options.batch_tolerance = a.batch_tolerance;
  if (format == workload::WorkloadFormat::kCapture) {
    // The capture's ranks on the fabric's servers, its groups as dimensions of a logical network.
    auto logical = workload::capture::fabric_logical_network(workload::capture::read_manifest(a.workload),
                                                             fabric.servers, a.grow_groups);
    auto dag = make_workload_dag(a, logical);
    auto run = sim::simulate_workload(dag, logical, fabric, compute, flow_options);
    auto json = sim::to_json(fabric, logical, dag, compute, run);
    return {std::move(fabric), std::move(logical), std::move(dag), std::move(run), std::move(json)};
  }
  const auto entry = model_entry(a);
  if (workload::pipelined(entry.parallelism))
    throw InputError(pipeline_given(a) ? "--pp" : a.workload,
                     "pipeline parallelism and micro-batches run on dimension networks; the flow-level model of a "
                     "fabric runs one stage");
  auto logical = workload::logical_network(entry.parallelism, fabric.servers);
  checked_layout(a, entry, logical);
  check_what_if(a, workload::WorkloadFormat::kModel);
  auto dag = workload::build_training_dag(entry.model, entry.parallelism, logical);
  workload::scale_compute(dag, a.compute_scale, "--compute-scale");
  auto run = sim::simulate_workload(dag, logical, fabric, compute, flow_options);
  auto json = sim::to_json(fabric, logical, dag, compute, run);
  return {std::move(fabric), std::move(logical), std::move(dag), std::move(run), std::move(json)};
}

// Everything `chorus sim workload` does on a dimension network but its output.
SimWorkloadOutcome simulate_workload_on_dims(const SimWorkloadArgs& a,
                                             const std::function<void(std::size_t, std::size_t)>& progress) {
  check_common(a);
  if (!a.traffic_csv.empty())
    throw InputError("--traffic-csv", "applies to fabrics (--topology with a 'fabric:' file)");
  if (a.batch_tolerance != 0)
    throw InputError("--batch-tolerance", "applies to fabrics (--topology with a 'fabric:' file)");
  std::optional<sim::AstraSystem> system;
  if (!a.system.empty()) system = sim::load_astra_system(a.system);
  SimWorkloadOutcome out{system ? sim::apply_astra_system(workload_network(a.topology, a.workload, a.world), *system)
                                : workload_network(a.topology, a.workload, a.world),
                         {},
                         {},
                         {},
                         {}};
  const net::Network& network = out.network;
  out.dag = make_workload_dag(a, network);
  auto& options = out.options;
  options.scheduler =
      system && !a.scheduler_given ? sim::astra_scheduler(*system) : sched::parse_scheduler(a.scheduler);
  options.chunks_per_collective = system && !a.chunks_given ? system->preferred_dataset_splits : a.chunks;
  if (a.max_chunks_per_dim < 0) throw InputError("--max-chunks-per-dim", "must be >= 0 (0 = no limit)");
  options.max_chunks_per_dim =
      system && !a.max_chunks_given ? system->active_chunks_per_dimension : a.max_chunks_per_dim;
  if (system && !a.max_chunks_given) options.transfers_per_dim = sim::astra_transfers_per_dim(network, *system);
  options.keep_dimension = system.has_value();  // ASTRA-sim's all-reduce phase on the last dimension
  options.compute.peak_tflops = a.peak_tflops;
  options.compute.memory_bandwidth_gbs = a.memory_bandwidth_gbs;
  if (system && system->roofline) {  // ASTRA-sim's roofline: its peak-perf and local-mem-bw
    options.compute.peak_tflops = system->peak_tflops;
    options.compute.memory_bandwidth_gbs = system->local_mem_GBps;
  }
  options.record_stages = !a.trace.empty();
  if (!a.speeds.empty()) options.speeds = sim::parse_speeds(a.speeds, out.network.num_npus(), "--speeds");
  options.progress = progress;
  out.run = sim::simulate_workload(out.dag, out.network, options);
  options.progress = nullptr;
  out.json = sim::to_json(out.network, out.dag, options, out.run.result);
  return out;
}

void register_sim_workload_command(CLI::App& sim) {
  auto args = std::make_shared<SimWorkloadArgs>();
  auto* w = sim.add_subcommand("workload", "Simulate training iterations of a model (training DAG, Themis Sec. 6.2)");
  w->add_option("-w,--workload", args->workload,
                "Model zoo name (resnet152 | gnmt | dlrm | transformer-1t | moe | topoopt-candle | topoopt-bert | "
                "topoopt-dlrm), workload YAML, ASTRA-sim text file, Chakra trace (name.<rank>.et, or the prefix name), "
                "PyTorch execution graph (JSON), or a `chorus capture` directory")
      ->capture_default_str();
  w->add_option("-t,--topology", args->topology,
                "Preset name (see `chorus sim topologies`), network YAML file, or fabric YAML file (flow-level model; "
                "`chorus topo fabric` / `chorus topo find --save` write them), or host (a capture's ranks on this "
                "machine's model)")
      ->capture_default_str();
  w->add_option("--scheduler", args->scheduler, "baseline | themis-fifo | themis-scf (or themis) | ideal")
      ->capture_default_str();
  w->add_option("-i,--iterations", args->iterations, "Training iterations")->capture_default_str();
  w->add_option("-c,--chunks", args->chunks, "Chunks per collective")->capture_default_str();
  w->add_option("--bucket", args->bucket,
                "Data-parallel gradient bucket, e.g. 25MiB (default: the model's; 0 = one all-reduce per layer)");
  w->add_option("--peak-tflops", args->peak_tflops, "Accelerator peak FLOP/s (roofline), TFLOP/s")
      ->capture_default_str();
  w->add_option("--memory-bandwidth", args->memory_bandwidth_gbs, "Accelerator memory bandwidth (roofline), GB/s")
      ->capture_default_str();
  w->add_option(
      "--speeds", args->speeds,
      "Stragglers: per NPU compute speed, a comma list (1 = nominal, 0.5 = half as fast) or uniform:MIN:MAX:SEED; "
      "a pipeline stage computes at its slowest NPU's speed");
  w->add_flag("--no-dp-overlap", args->no_dp_overlap,
              "Start the data-parallel gradient traffic only after back-propagation ends");
  w->add_option("--tp", args->tp,
                "Tensor-parallel NPUs: the network's first dimensions whose NPUs multiply to this (default: the "
                "model's group; models with tensor-parallel layers)")
      ->check(CLI::Range(1, 1 << 30));
  w->add_option("--dp", args->dp,
                "Data-parallel NPUs, the dimensions between the tensor- and pipeline-parallel ones: tp x dp x pp "
                "must be the network's NPUs (default: what remains)")
      ->check(CLI::Range(1, 1 << 30));
  w->add_option("--pp", args->pp,
                "Pipeline stages over the network's last dimensions (their NPU count; default: the model's, 1)")
      ->check(CLI::Range(1, 1 << 20));
  w->add_option(
       "--microbatches", args->microbatches,
       "Micro-batches per mini-batch (default: the model's, else 4 x stages; with 1 stage: gradient accumulation)")
      ->check(CLI::Range(1, 1 << 30));
  w->add_option("--pipeline-schedule", args->pipeline_schedule, "1f1b (PipeDream-Flush, default) | gpipe");
  w->add_option("--ns-per-cycle", args->ns_per_cycle, "ASTRA-sim text workloads: nanoseconds per compute cycle")
      ->capture_default_str();
  w->add_option("--rank", args->rank,
                "Chakra traces: whose file to import (default: the number in the file name, else 0)");
  w->add_flag("--chakra-skip-unsupported", args->chakra_skip_unsupported,
              "Chakra traces: collectives chorus does not simulate (BROADCAST, REDUCE, ...) finish at once "
              "instead of being errors");
  w->add_flag("--chakra-ctrl-deps", args->chakra_ctrl_deps,
              "Chakra traces: ctrl_deps are dependencies too (default: data_deps only, as Chakra's feeder)");
  w->add_flag("--check-ranks", args->check_ranks,
              "Chakra traces and execution graphs (<name>.<rank>.et / .json): import every rank's file and require "
              "the same collectives as the simulated rank's");
  w->add_option("--profile-trace", args->profile_trace,
                "Execution graphs: a torch profiler trace (export_chrome_trace) of the same window and rank; its "
                "operators' durations replace the roofline's");
  w->add_option("--collective-dims", args->collective_dims,
                "Execution graphs: the network dimensions each collective's process group spans, K=D[,D...];... "
                "(collective K from 1 in issue order, dimensions from 0; default: all)");
  add_what_if_options(*w, *args);
  w->add_flag("--json", args->json, "Print one JSON object instead of a table");
  w->add_option("--trace", args->trace, "Write a Chrome-trace JSON timeline (Perfetto) to this file");
  w->add_option("--csv", args->csv,
                "Write the result (the --json object's fields) as one CSV row ('-': standard output)");
  w->add_option("--traffic-csv", args->traffic_csv, "Fabrics: write the server x server traffic matrix (bytes, CSV)");
  w->add_option("--batch-tolerance", args->batch_tolerance,
                "Fabrics: finish flows within this fraction of their duration together (0: exact; 1e-3 is ~3x faster "
                "on all-to-alls, docs/graph-networks.md)")
      ->capture_default_str();
  w->add_option("--plan", args->plan,
                "A SYNDICATE plan (chorus plan --out): re-simulate it by optSched on its workload and "
                "topology (names from the file unless --workload / --topology are given)");
  w->add_option("--max-chunks-per-dim", args->max_chunks_per_dim,
                "At most this many chunks on a dimension at once, over all collectives; 0 = no limit")
      ->capture_default_str();
  w->add_option("--system", args->system,
                "ASTRA-sim system JSON: chunks, active chunks per dimension, FIFO/LIFO, per-dimension algorithms, "
                "endpoint delay, local-mem-bw (explicit flags win)");
  w->callback([args, w] {
    args->max_chunks_given = w->get_option("--max-chunks-per-dim")->count() > 0;
    args->scheduler_given = w->get_option("--scheduler")->count() > 0;
    args->chunks_given = w->get_option("--chunks")->count() > 0;
    if (!args->plan.empty())
      run_sim_plan(*args, w->get_option("--workload")->count() > 0, w->get_option("--topology")->count() > 0);
    else
      run_sim_workload(*args);
  });
}

}  // namespace chorus::cli
