#pragma once
// `chorus reproduce syndicate`: SYNDICATE's evaluation, simulated. The Fig. 6 example (exact), and
// the DLRM-like models A1-A4 of Table 2 on the Table 1 testbed under every method of Sec. 6.2
// (SYNDICATE, S-Exec, S-Sched, BS+, FIFO and the greedy start): throughput relative to BS+
// (Fig. 11) and compute idling (Fig. 14 for A2), beside the paper's numbers.
#include <string>
#include <vector>

#include "syndicate/joint_optimizer.h"

namespace chorus::eval {

struct SyndicateCase {
  std::string workload;
  std::string topology;
  double paper_speedup = 0;  // SYNDICATE over BS+ in the paper (0: none given)
};

struct SyndicateRow {
  std::string workload;
  std::string topology;
  syndicate::Method method = syndicate::Method::kGreedy;
  double iteration_ns = 0;
  double throughput_vs_bsplus = 0;  // BS+'s iteration time / this method's
  double compute_idle_fraction = 0;
  long evaluations = 0;
  double search_s = 0;
  int comm_ops = 0;
  double paper_speedup = 0;
};

struct SyndicateStudyOptions {
  std::vector<SyndicateCase> cases;  // default: syndicate-fig6, syndicate-a1 .. a4 on the testbed
  std::uint64_t seed = 1;
  long evaluations = 20000;
  bool progress = true;
  int workers = 1;  // cases at once on a pool of threads (the rows but search_s do not depend on it)
};

struct SyndicateStudy {
  std::vector<SyndicateRow> rows;
};

SyndicateStudyOptions default_syndicate_cases();
SyndicateStudy run_syndicate_study(const SyndicateStudyOptions& options);

// DIR/syndicate.csv and, through chorus.plot, DIR/fig11_throughput.svg and
// DIR/fig14_compute_idle.svg. Returns the paths written.
std::vector<std::string> write_syndicate_outputs(const SyndicateStudy& study, const std::string& dir);
std::string format_syndicate_table(const SyndicateStudy& study);

}  // namespace chorus::eval
