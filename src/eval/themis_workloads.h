#pragma once
// The real-workload study of Themis Sec. 6.2 (Fig. 12): the four paper models on the six
// Table 2 topologies under every scheduler, 3 training iterations each.
#include <functional>
#include <string>
#include <vector>

#include "eval/themis_microbench.h"
#include "net/network.h"
#include "workload/compute_model.h"
#include "workload/dag.h"

namespace chorus::eval {

struct WorkloadStudyConfig {
  std::vector<std::string> workloads;    // default: resnet152, gnmt, dlrm, transformer-1t
  std::vector<net::Network> topologies;  // default: the six of Table 2
  std::vector<std::string> schedulers;   // default: baseline, themis-fifo, themis-scf, ideal
  int iterations = 3;
  int chunks = 64;
  int batch = 0;                   // per-NPU mini-batch of the zoo models; 0: the zoo's
  workload::ComputeModel compute;  // the accelerator (default: the A100 roofline)
  // Builds a workload's DAG for a topology instead of the zoo (e.g. from an ASTRA-sim text
  // file); empty: the zoo model of that name at `batch`, `iterations` iterations.
  std::function<workload::Dag(const std::string& workload, const net::Network&)> make_dag;
  // Simulations at once on a pool of threads (the study does not depend on it). make_dag is
  // called before any of them, from the calling thread.
  int workers = 1;

  static WorkloadStudyConfig paper_defaults();
};

struct WorkloadRow {
  std::string workload, topology, scheduler;
  double iteration_time_ns, compute_ns, forward_compute_ns, backward_compute_ns;
  double exposed_comm_ns, exposed_dp_comm_ns, exposed_mp_comm_ns, avg_bw_utilization;
};

struct WorkloadSummary {
  std::string workload, scheduler;
  double mean_speedup, max_speedup;  // iteration time, baseline / scheduler, over topologies
  std::string max_at;
  double mean_exposed_reduction;  // exposed comm, baseline / scheduler (where > 0)
};

struct WorkloadStudy {
  WorkloadStudyConfig config;
  std::vector<WorkloadRow> rows;
  std::vector<WorkloadSummary> summary;
};

WorkloadStudy run_themis_workloads(const WorkloadStudyConfig& config, const Progress& progress = {});
// DIR/workloads.csv, DIR/workloads_summary.csv, then (chorus.plot, matplotlib) the Fig. 12
// stacked bars DIR/fig12_<workload>.svg and DIR/fig12.svg (all workloads). Returns the paths
// written. Throws InputError if plotting fails (the data files are written by then).
std::vector<std::string> write_workload_outputs(const WorkloadStudy& study, const std::string& dir);
std::string format_workload_tables(const WorkloadStudy& study);

}  // namespace chorus::eval
