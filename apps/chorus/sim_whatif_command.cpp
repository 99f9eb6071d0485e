// chorus sim whatif — one capture on several networks and schedulers, scaled (src/eval/capture_whatif.h).
#include <cmath>
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "apps/chorus/commands.h"
#include "apps/chorus/output_checks.h"
#include "apps/chorus/workload_dag_args.h"
#include "core/error.h"
#include "eval/capture_whatif.h"
#include "net/graph/graph_yaml.h"
#include "workload/capture/capture_manifest.h"

namespace chorus::cli {

namespace {

struct WhatIfArgs {
  std::string workload;
  std::vector<std::string> topologies = {"host", "3D-SW_SW_SW_homo", "3D-FC_Ring_SW", "4D-Ring_FC_Ring_SW"};
  std::vector<std::string> schedulers = {"baseline", "themis-scf"};
  int world = 0;
  std::vector<std::string> grow_groups;
  double compute_scale = 1;
  int iterations = 1;
  int chunks = 64;
  double peak_tflops = 312;
  double memory_bandwidth_gbs = 1555;
  std::string out;
};

void run_whatif(const WhatIfArgs& a) {
  if (!workload::capture::is_capture_dir(a.workload))
    throw InputError("--workload", fmt::format("'{}' is no chorus capture (a directory with manifest.json; "
                                               "`chorus capture` writes one, docs/capture.md)",
                                               a.workload));
  if (!(a.compute_scale > 0) || !std::isfinite(a.compute_scale))
    throw InputError("--compute-scale", fmt::format("must be a positive number, got {}", a.compute_scale));
  if (a.iterations < 1) throw InputError("--iterations", fmt::format("must be >= 1, got {}", a.iterations));
  if (a.chunks < 1) throw InputError("--chunks", fmt::format("must be >= 1, got {}", a.chunks));
  eval::WhatIfConfig c;
  c.capture = a.workload;
  c.schedulers = a.schedulers;
  c.world = a.world;
  c.world_field = "--world";
  c.grow_groups = a.grow_groups;
  c.grow_field = "--grow-groups";
  c.compute_scale = a.compute_scale;
  c.iterations = a.iterations;
  c.chunks = a.chunks;
  c.compute.peak_tflops = a.peak_tflops;
  c.compute.memory_bandwidth_gbs = a.memory_bandwidth_gbs;
  for (const auto& t : a.topologies) {
    eval::WhatIfNetwork n;
    n.label = t;
    if (net::is_fabric_file(t))
      n.fabric = net::load_fabric_yaml(t);
    else
      n.dims = workload_network(t, a.workload, a.world);
    c.networks.push_back(std::move(n));
  }
  const auto study = eval::run_capture_whatif(c);
  if (!study.notes.empty()) fmt::print(stderr, "chorus: {}\n", study.notes);
  fmt::print("{}", eval::format_whatif_table(study));
  if (a.out.empty()) return;
  std::fflush(stdout);
  for (const auto& f : eval::write_whatif_outputs(study, a.out)) fmt::print("wrote {}\n", f);
}

}  // namespace

void register_sim_whatif_command(CLI::App& sim) {
  auto a = std::make_shared<WhatIfArgs>();
  auto* w = sim.add_subcommand(
      "whatif",
      "What-ifs from a capture: one `chorus capture` directory on several networks and schedulers, replicated to "
      "a larger world and with faster compute; the iteration time split into compute and exposed communication");
  w->add_option("-w,--workload", a->workload, "The capture's directory (chorus capture --out DIR)")->required();
  w->add_option("-t,--topology", a->topologies,
                "Networks, comma-separated: presets, network YAML files, fabric YAML files (flow-level model), host "
                "(this machine's model)")
      ->delimiter(',')
      ->capture_default_str();
  w->add_option("--scheduler", a->schedulers,
                "Schedulers, comma-separated (baseline | themis-fifo | themis-scf | ideal); a fabric runs its "
                "flow-level model once")
      ->delimiter(',')
      ->capture_default_str();
  w->add_option("--world", a->world,
                "The capture replicated to this many ranks (a multiple of its own; every network must have as many "
                "NPUs); default: each network's NPUs")
      ->check(CLI::Range(1, 1 << 24));
  w->add_option("--grow-groups", a->grow_groups,
                "The capture's sub-groups that grow with the world, comma-separated, by the labels the import lists "
                "(torch/3): each becomes the union of its images in every copy; the others keep their size")
      ->delimiter(',');
  w->add_option("--compute-scale", a->compute_scale, "Compute this many times as fast (2: durations halved); > 0")
      ->capture_default_str();
  w->add_option("-i,--iterations", a->iterations, "The capture's window repeated")->capture_default_str();
  w->add_option("-c,--chunks", a->chunks, "Chunks per collective")->capture_default_str();
  w->add_option("--peak-tflops", a->peak_tflops, "Operators without a measured duration: roofline peak, TFLOP/s")
      ->capture_default_str();
  w->add_option("--memory-bandwidth", a->memory_bandwidth_gbs,
                "Operators without a measured duration: roofline memory bandwidth, GB/s")
      ->capture_default_str();
  w->add_option("-o,--out", a->out,
                "Write whatif.csv, whatif.json and the figure whatif.svg (stacked bars) into this directory")
      ->check(kWritableDir);
  w->callback([a] { run_whatif(*a); });
}

}  // namespace chorus::cli
