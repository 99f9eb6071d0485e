#pragma once
// TopoOpt (NSDI'23) Sec. 5.3, Figs. 12-13: the training iteration time of CANDLE, BERT and DLRM
// (Table 2, top row) on a dedicated cluster, per fabric, as the link bandwidth B grows; the
// training DAG on each fabric of eval/topoopt_fabrics.h through the flow-level model. Part of
// `chorus reproduce topoopt`.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace chorus::eval {

struct IterationRow {
  std::string model;
  std::string fabric;
  int servers = 0;
  int degree = 0;
  double bandwidth_gbps = 0;  // B, per interface
  double server_gbps = 0;     // what a server can send at once on this fabric
  double iteration_ns = 0;
  double compute_ns = 0;
  double exposed_dp_ns = 0;
  double exposed_mp_ns = 0;
  std::int64_t flows = 0;
  std::int64_t reallocations = 0;
  std::int64_t full_reallocations = 0;  // of which filled every flow anew
  std::int64_t refilled_flows = 0;      // flows given a rate, over all reallocations
  std::int64_t refilled_bundles = 0;    // and the bundles (flows of one path) they came in: the filler's work
  double max_link_utilization = 0;
  double wall_s = 0;               // simulation time
  double reconfig_latency_us = 0;  // topoopt-reconfig only
  int reconfigurations = 0;        // topoopt-reconfig only
};

struct IterationStudyOptions {
  std::vector<std::string> models = {"topoopt-candle", "topoopt-bert", "topoopt-dlrm"};
  std::vector<std::string> fabrics;  // empty: every one of iteration_fabric_names()
  int servers = 128;                 // Figs. 12-13
  std::vector<int> degrees = {4, 8};
  std::vector<double> bandwidths = {10, 25, 40, 100, 200};
  int gpus_per_server = 4;  // "128 servers with four A100 GPUs": a server = 4 x batch, 4 x compute
  double gpu_tflops = 156;  // A100 TF32 tensor-core peak (the models train in FP32)
  double gpu_memory_gbs = 1555;
  int iterations = 2;
  std::uint64_t seed = 1;              // the expander's
  double batch_tolerance = 1e-3;       // the flow engine's (0: exact; docs/graph-networks.md has the error)
  double reconfig_latency_us = 10000;  // topoopt-reconfig in Figs. 12-13 (the paper: 10 ms OCSs)
  // Circuit fabrics (TopoOpt-reconfig, SiP-ML) re-plan also when flows wait while a circuit idles
  // (true), or only every 50 ms as Appendix D says (false).
  bool reconfig_on_demand = true;
  // Fig. 15: TopoOpt-reconfig over these OCS latencies (empty: skipped), the first degree and
  // B = reconfig_gbps, against TopoOpt-oneshot.
  std::vector<std::string> reconfig_models = {"topoopt-bert", "topoopt-dlrm"};
  std::vector<double> reconfig_latencies_us = {1, 10, 100, 1000, 10000};
  double reconfig_gbps = 100;
  // Runs at once on a pool of worker threads (each run is one simulation; the rows and ratios do
  // not depend on it).
  int workers = 1;
  // After each run, one at a time: the row, runs done, runs in all, and the seconds left on the
  // workers estimated from the runs' own times (per model, fabric, degree, bandwidth).
  std::function<void(const IterationRow&, int done, int total, double left_s)> progress;
};

struct IterationStudy {
  IterationStudyOptions options;
  std::vector<IterationRow> rows;           // model x degree x bandwidth x fabric
  std::vector<IterationRow> reconfig_rows;  // Fig. 15: model x (oneshot, then reconfig per latency)
  // Per (model, degree): mean over bandwidths of fabric / TopoOpt-oneshot iteration time.
  struct Ratio {
    std::string model;
    int degree = 0;
    std::string fabric;
    double mean_over_topoopt = 0;
  };
  std::vector<Ratio> ratios;
};

IterationStudy run_iteration_study(const IterationStudyOptions& options);

// One point of the study: `model` on `fabric` (servers, degree and gpus_per_server ... seed from
// `options`, its models/fabrics/degrees/bandwidths lists ignored) at B = `gbps`; topoopt-reconfig
// with options.reconfig_latency_us.
IterationRow run_iteration(const std::string& model, const std::string& fabric, int degree, double gbps,
                           const IterationStudyOptions& options);

// DIR/iterations.csv (model,fabric,servers,degree,bandwidth_gbps,server_gbps,iteration_ms,compute_ms,
// exposed_dp_ms,exposed_mp_ms,flows,reallocations,max_link_utilization,wall_s) and, through chorus.plot,
// DIR/fig12_13_iterations.svg; with Fig. 15 rows DIR/reconfig.csv (model,fabric,reconfig_latency_us,
// iteration_ms,reconfigurations,wall_s) and DIR/fig15_reconfig.svg. Returns the paths written.
std::vector<std::string> write_iteration_outputs(const IterationStudy& study, const std::string& dir);
std::string format_iteration_table(const IterationStudy& study);

}  // namespace chorus::eval
