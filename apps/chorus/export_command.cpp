// chorus export --chakra: a training DAG as one Chakra execution trace per rank (ASTRA-sim 2.x's input)
#include <algorithm>
#include <fmt/format.h>

#include "apps/chorus/commands.h"
#include "apps/chorus/output_checks.h"
#include "apps/chorus/workload_dag_args.h"
#include "workload/capture/capture_manifest.h"
#include "core/error.h"
#include "core/memory_budget.h"
#include "net/graph/graph_yaml.h"
#include "net/network_yaml.h"
#include "sim/astra_system.h"
#include "core/text_file.h"
#include "workload/chakra/chakra_export.h"
#include "workload/parallelism.h"

namespace chorus::cli {
namespace {

struct ExportArgs : WorkloadDagArgs {
  bool chakra = false;
  std::string topology = "3D-SW_SW_SW_homo";
  std::string out;
  std::string name;    // default: the workload's name
  std::string system;  // ASTRA-sim's system JSON, checked and copied beside the traces
};

void run_export(const ExportArgs& a) {
  if (!a.chakra) throw InputError("chorus export", "name the format: --chakra (the only one so far)");
  require_range(a.iterations, 1, workload::kMaxTrainingIterations, "--iterations");
  if (!(a.ns_per_cycle > 0)) throw InputError("--ns-per-cycle", "must be positive");
  if (net::is_fabric_file(a.topology))
    throw InputError("--topology",
                     "Chakra traces describe collectives on a dimension network (a preset or network YAML), "
                     "not a fabric");
  const net::Network network = workload_network(a.topology, a.workload, a.world);
  // The system file is what ASTRA-sim runs the traces with: checked against the network as
  // `sim workload --system` reads it (so chorus and ASTRA-sim answer the same question), then
  // copied beside the traces.
  std::string system_copy;
  if (!a.system.empty()) {
    (void)sim::apply_astra_system(network, sim::load_astra_system(a.system));
    system_copy = read_text_file(a.system, "system file");
  }
  const auto dag = make_workload_dag(a, network);
  const std::string name = a.name.empty() ? dag.name : a.name;
  if (name.empty() || name.find('/') != std::string::npos)
    throw InputError("--name", fmt::format("'{}' must be a non-empty file name without '/'", name));
  // A capture's sends and recvs name their peers: each captured rank's own DAG, its traces per rank.
  const bool per_rank = std::any_of(dag.nodes.begin(), dag.nodes.end(), [](const workload::Node& n) {
    return n.comm == workload::CommKind::kPointToPoint && n.peer >= 0;
  });
  std::vector<workload::Dag> by_rank;
  if (per_rank)
    for (int r = 0; r < workload::capture::read_manifest(a.workload).world; ++r) {
      auto own = a;
      own.rank = r;
      by_rank.push_back(r == std::max(a.rank, 0) ? dag : make_workload_dag(own, network));
    }
  const auto files = per_rank ? workload::write_chakra_rank_traces(by_rank, network, a.out, name)
                              : workload::write_chakra_traces(dag, network, a.out, name);
  if (!a.system.empty()) {
    write_text_file(a.out + "/" + name + ".system.json", system_copy);
    fmt::print("system file {} checked and copied to {}/{}.system.json\n", a.system, a.out, name);
  }
  fmt::print(
      "{} on {} ({}, {} NPUs), {} iteration(s): {} Chakra traces {}/{}.<rank>.et, {} nodes and {} bytes each "
      "({})\n",
      dag.name, network.name, network.shape(), network.num_npus(), dag.iterations, files.files, a.out, name,
      files.nodes, files.bytes,
      per_rank ? "the largest; each captured rank's own DAG, with its sends and recvs, in every copy"
               : "every rank runs the same DAG: rank 0's file, the others hard links to it");
}

}  // namespace

void register_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  args->iterations = 1;  // a Chakra trace is normally one iteration
  auto* e = app.add_subcommand("export",
                               "Write a training workload in another simulator's format (Chakra traces for "
                               "ASTRA-sim 2.x)");
  e->add_flag("--chakra", args->chakra, "Chakra execution traces, one per rank (the format ASTRA-sim 2.x reads)")
      ->required();
  e->add_option("-w,--workload", args->workload,
                "Model zoo name, workload YAML, ASTRA-sim text file, Chakra trace or PyTorch execution graph "
                "(as `chorus sim workload`)")
      ->capture_default_str();
  e->add_option("-t,--topology", args->topology,
                "Preset name or network YAML file: the ranks and dimensions (host: a capture's ranks on this machine's "
                "model)")
      ->capture_default_str();
  e->add_option("-o,--out", args->out, "Directory for <name>.<rank>.et (created if missing)")
      ->required()
      ->check(kWritableDir);
  e->add_option("--name", args->name, "File name prefix (default: the workload's name)");
  e->add_option("-i,--iterations", args->iterations, "Training iterations in the trace")->capture_default_str();
  e->add_option("--bucket", args->bucket,
                "Data-parallel gradient bucket, e.g. 25MiB (default: the model's; 0 = one all-reduce per layer)");
  e->add_flag("--no-dp-overlap", args->no_dp_overlap,
              "Start the data-parallel gradient traffic only after back-propagation ends");
  e->add_option("--ns-per-cycle", args->ns_per_cycle, "ASTRA-sim text workloads: nanoseconds per compute cycle")
      ->capture_default_str();
  add_what_if_options(*e, *args);
  e->add_option("--system", args->system,
                "ASTRA-sim system JSON to run the traces with: checked against the network as `sim workload "
                "--system` reads it, copied to <out>/<name>.system.json");
  e->callback([args] { run_export(*args); });
}

}  // namespace chorus::cli
