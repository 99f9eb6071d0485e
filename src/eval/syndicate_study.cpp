// `chorus reproduce syndicate` (syndicate_study.h; docs/syndicate.md "Reproduction").
#include "eval/syndicate_study.h"

#include <fmt/format.h>

#include "core/plot_call.h"
#include "core/text_file.h"
#include "eval/study_runs.h"
#include "syndicate/workloads.h"

namespace chorus::eval {

SyndicateStudyOptions default_syndicate_cases() {
  SyndicateStudyOptions o;
  // Sec. 6.4: SYNDICATE over BS+ 1.74x (A1), 1.44x (A2), 1.38x (A3), 1.77x (A4).
  o.cases = {{"syndicate-fig6", "syndicate-fig6", 0},
             {"syndicate-a1", "syndicate-testbed", 1.74},
             {"syndicate-a2", "syndicate-testbed", 1.44},
             {"syndicate-a3", "syndicate-testbed", 1.38},
             {"syndicate-a4", "syndicate-testbed", 1.77}};
  return o;
}

SyndicateStudy run_syndicate_study(const SyndicateStudyOptions& o) {
  SyndicateStudy study;
  // Every case on the pool (a case's methods share its scheduler, so they run one after another).
  std::vector<StudyRun> runs;
  for (const auto& c : o.cases) runs.push_back({{{"workload", c.workload}, {"topology", c.topology}}, c.workload});
  std::vector<std::vector<SyndicateRow>> per_case(o.cases.size());
  run_study(runs, o.workers,
            [&](std::size_t i) {
              const auto& c = o.cases[i];
              const auto topo = syndicate::load_topology(c.topology, 4, "topology");
              const auto dag = syndicate::load_workload_dag(c.workload, topo, 2);
              const auto problem = syndicate::make_problem(dag, topo, {});
              syndicate::Scheduler scheduler(problem);
              syndicate::SearchOptions search;
              search.seed = o.seed;
              search.max_evaluations = o.evaluations;
              search.time_budget_s = 600;  // the evaluation count bounds the search: the same plan everywhere
              std::vector<SyndicateRow> rows;
              double bsplus = 0;
              for (auto m : syndicate::all_methods()) {
                if (o.progress)
                  fmt::print(stderr, "chorus reproduce syndicate: {} {} ...\n", c.workload, syndicate::to_string(m));
                const auto r = syndicate::run_method(m, scheduler, problem, search);
                SyndicateRow row;
                row.workload = c.workload;
                row.topology = c.topology;
                row.method = m;
                row.iteration_ns = r.schedule.iteration_ns;
                row.compute_idle_fraction = r.schedule.compute_idle_fraction;
                row.evaluations = r.evaluations;
                row.search_s = r.search_s;
                row.comm_ops = static_cast<int>(problem.comms.size());
                row.paper_speedup = c.paper_speedup;
                if (m == syndicate::Method::kBsPlus) bsplus = row.iteration_ns;
                rows.push_back(row);
              }
              for (auto& row : rows) row.throughput_vs_bsplus = bsplus / row.iteration_ns;
              per_case[i] = std::move(rows);
            },
            {});
  for (auto& rows : per_case) study.rows.insert(study.rows.end(), rows.begin(), rows.end());
  return study;
}

std::vector<std::string> write_syndicate_outputs(const SyndicateStudy& study, const std::string& dir) {
  OutputDir out(dir);
  std::string csv =
      "workload,topology,method,iteration_time_ns,throughput_vs_bsplus,compute_idle_fraction,evaluations,search_s,"
      "comm_ops,paper_speedup\n";
  for (const auto& r : study.rows)
    csv += fmt::format("{},{},{},{:.1f},{:.6f},{:.6f},{},{:.4f},{},{}\n", r.workload, r.topology,
                       syndicate::to_string(r.method), r.iteration_ns, r.throughput_vs_bsplus, r.compute_idle_fraction,
                       r.evaluations, r.search_s, r.comm_ops, r.paper_speedup);
  out.write("syndicate.csv", csv);
  for (auto& f : draw_figures("syndicate", dir)) out.written().push_back(std::move(f));
  return out.written();
}

std::string format_syndicate_table(const SyndicateStudy& study) {
  std::string out = "SYNDICATE Sec. 6 (simulated): iteration time, throughput relative to BS+, compute idling\n";
  std::string last, below;
  for (const auto& r : study.rows) {
    if (r.workload != last) {
      out += fmt::format("\n{} on {} ({} comm-ops over 2 iterations){}\n", r.workload, r.topology, r.comm_ops,
                         r.paper_speedup > 0 ? fmt::format("; paper: SYNDICATE {:.2f}x BS+", r.paper_speedup) : "");
      out += fmt::format("  {:<10} {:>13} {:>9} {:>13} {:>11}\n", "method", "iteration ms", "vs BS+", "compute idle",
                         "evaluations");
      last = r.workload;
    }
    out += fmt::format("  {:<10} {:>13.4f} {:>8.3f}x {:>12.1f}% {:>11}\n", syndicate::to_string(r.method),
                       r.iteration_ns / 1e6, r.throughput_vs_bsplus, 100 * r.compute_idle_fraction, r.evaluations);
    if (r.method == syndicate::Method::kSyndicate && r.paper_speedup > 0 &&
        r.throughput_vs_bsplus < r.paper_speedup - 0.05)
      below += fmt::format("{}{} {:.2f}x (paper {:.2f}x)", below.empty() ? "" : ", ", r.workload,
                           r.throughput_vs_bsplus, r.paper_speedup);
  }
  if (!below.empty())
    out += fmt::format(
        "\nSYNDICATE over BS+ below the paper: {}; why: docs/syndicate.md, \"Differences from the paper, and "
        "what is not done yet\"\n",
        below);
  return out;
}

}  // namespace chorus::eval
