// Training-DAG executor speed (see BENCHMARKS-history.md for how to run and the recorded numbers).
//   bench_dag   Transformer-1T per Table 2 topology; growth with layers, iterations and
//               concurrent collectives; Transformer-1T as an 8-stage pipeline; the whole
//               `reproduce themis-workloads` study.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

#include "eval/themis_workloads.h"
#include "net/presets.h"
#include "sim/dag_executor.h"
#include "workload/parallelism.h"
#include "workload/zoo.h"

using namespace chorus;

namespace {

template <typename F>
double time_ms(F&& f, int reps) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Simulates `dag` under themis-scf; returns median ms, and the node count.
double run_ms(const workload::Dag& dag, const net::Network& net, int reps) {
  sim::WorkloadSimOptions o;
  return time_ms([&] { sim::simulate_workload(dag, net, o); }, reps);
}

int comm_nodes(const workload::Dag& dag) {
  return static_cast<int>(std::count_if(dag.nodes.begin(), dag.nodes.end(),
                                        [](const auto& n) { return n.kind == workload::NodeKind::kComm; }));
}

}  // namespace

int main() {
  fmt::print("# Transformer-1T, 1 iteration, themis-scf, 64 chunks, median of 3 (DAG build excluded)\n");
  fmt::print("{:<22} {:>7} {:>12} {:>10} {:>10}\n", "topology", "nodes", "collectives", "ms", "us/node");
  auto t1t = workload::zoo_model("transformer-1t");
  t1t.parallelism.iterations = 1;
  for (const auto& net : net::table2_presets()) {
    const auto dag = workload::build_training_dag(t1t.model, t1t.parallelism, net);
    const double ms = run_ms(dag, net, 3);
    fmt::print("{:<22} {:>7} {:>12} {:>10.1f} {:>10.2f}\n", net.name, dag.nodes.size(), comm_nodes(dag), ms,
               1e3 * ms / static_cast<double>(dag.nodes.size()));
  }
  const auto homo = *net::find_preset("3D-SW_SW_SW_homo");

  fmt::print(
      "\n# growth with layers: data-parallel model of L identical layers (1 MB of gradients each),\n"
      "# 1 iteration on 3D-SW_SW_SW_homo\n");
  fmt::print("{:>6} {:>7} {:>10} {:>10}\n", "layers", "nodes", "ms", "us/node");
  for (int layers : {16, 64, 256, 1024}) {
    workload::Model m{"synthetic", 1, 2, {}, {}};
    for (int l = 0; l < layers; ++l) {
      workload::Layer layer;
      layer.name = fmt::format("l{}", l);
      layer.forward_flops = 1e10;
      layer.params = 5e5;
      m.layers.push_back(layer);
    }
    workload::ParallelismConfig p;
    p.iterations = 1;
    const auto dag = workload::build_training_dag(m, p, homo);
    const double ms = run_ms(dag, homo, 3);
    fmt::print("{:>6} {:>7} {:>10.2f} {:>10.2f}\n", layers, dag.nodes.size(), ms,
               1e3 * ms / static_cast<double>(dag.nodes.size()));
  }

  fmt::print("\n# growth with iterations: Transformer-1T on 3D-SW_SW_SW_homo\n");
  fmt::print("{:>10} {:>7} {:>10} {:>10}\n", "iterations", "nodes", "ms", "ms/iter");
  for (int it : {1, 2, 4, 8}) {
    t1t.parallelism.iterations = it;
    const auto dag = workload::build_training_dag(t1t.model, t1t.parallelism, homo);
    const double ms = run_ms(dag, homo, 1);
    fmt::print("{:>10} {:>7} {:>10.1f} {:>10.1f}\n", it, dag.nodes.size(), ms, ms / it);
  }

  fmt::print(
      "\n# concurrent collectives: K 1 MB all-reduces issued together over all 3 dimensions of\n"
      "# 3D-SW_SW_SW_homo (64 chunks each, 6 stages per chunk)\n");
  fmt::print("{:>6} {:>10} {:>14}\n", "K", "ms", "us/chunk-stage");
  for (int k : {1, 4, 16, 64, 256}) {
    workload::Dag dag;
    dag.name = "concurrent";
    for (int i = 0; i < k; ++i) {
      workload::Node n;
      n.kind = workload::NodeKind::kComm;
      n.bytes = 1e6;
      n.dims = {0, 1, 2};
      dag.add(n);
    }
    const double ms = run_ms(dag, homo, 5);
    fmt::print("{:>6} {:>10.3f} {:>14.3f}\n", k, ms, 1e3 * ms / (k * 64.0 * 6));
  }

  fmt::print(
      "\n# pipeline: Transformer-1T in 8 stages (1F1B) over the last dimension of 3D-SW_SW_SW_homo,\n"
      "# tensor parallel over the first two, M micro-batches, 1 iteration (8 compute streams, 8 networks)\n");
  fmt::print("{:>4} {:>8} {:>10} {:>10}\n", "M", "nodes", "ms", "us/node");
  for (int m : {8, 16, 32}) {
    auto p = t1t.parallelism;
    p.iterations = 1;
    p.pp_stages = 8;
    p.microbatches = m;
    const auto dag = workload::build_training_dag(t1t.model, p, homo);
    const double ms = run_ms(dag, homo, 1);
    fmt::print("{:>4} {:>8} {:>10.1f} {:>10.2f}\n", m, dag.nodes.size(), ms,
               1e3 * ms / static_cast<double>(dag.nodes.size()));
  }

  const double study_ms = time_ms([] { eval::run_themis_workloads(eval::WorkloadStudyConfig::paper_defaults()); }, 1);
  fmt::print("\n# whole `reproduce themis-workloads` study (96 simulations, no output): {:.0f} ms\n", study_ms);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  fmt::print("# peak resident memory of this process: {:.1f} MiB\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
  return 0;
}
