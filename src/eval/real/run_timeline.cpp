// A run of a plan beside its prediction (run_timeline.h).
#include "eval/real/run_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "rt/runtime_instance.h"
#include "syndicate/plan_trace.h"

namespace chorus::eval {

using rt::DType;
using rt::EnforcedOp;
using rt::EnforcedStep;

namespace {

// Step `seq` of this rank's plan, with its comm-op.
struct StepRef {
  const EnforcedOp* op = nullptr;
  const EnforcedStep* step = nullptr;
};

std::vector<StepRef> steps_by_seq(const Active& active) {
  std::size_t total = 0;
  for (const auto& op : active.built.plan.ops) total += op.steps.size();
  std::vector<StepRef> out(total);
  for (const auto& op : active.built.plan.ops)
    for (const auto& st : op.steps) out[static_cast<std::size_t>(st.seq)] = {&op, &st};
  return out;
}

}  // namespace

std::vector<RankTimeline> gather_timelines(const Job& job, const Active& active, const RunStats& rs) {
  const auto by_seq = steps_by_seq(active);
  const std::size_t S = by_seq.size(), N = rs.compute_start_ns.size();
  std::vector<double> mine;
  mine.reserve(3 * S + 3 * N);
  mine.insert(mine.end(), rs.enforcer.issued_ns.begin(), rs.enforcer.issued_ns.end());
  mine.insert(mine.end(), rs.enforcer.completed_ns.begin(), rs.enforcer.completed_ns.end());
  for (const auto& r : by_seq) mine.push_back(r.step->idle ? 1.0 : 0.0);
  mine.insert(mine.end(), rs.compute_ready_ns.begin(), rs.compute_ready_ns.end());
  mine.insert(mine.end(), rs.compute_start_ns.begin(), rs.compute_start_ns.end());
  mine.insert(mine.end(), rs.compute_end_ns.begin(), rs.compute_end_ns.end());
  std::vector<double> all(mine.size() * static_cast<std::size_t>(job.world));
  job.runtime->issue(job.world_backend, rt::calls::all_gather(mine.data(), all.data(), mine.size(), DType::f64), false);
  std::vector<RankTimeline> out(static_cast<std::size_t>(job.world));
  for (std::size_t r = 0; r < out.size(); ++r) {
    const double* p = all.data() + r * mine.size();
    auto& t = out[r];
    t.issued_ns.assign(p, p + S);
    t.completed_ns.assign(p + S, p + 2 * S);
    for (std::size_t k = 0; k < S; ++k) t.idle.push_back(p[2 * S + k] != 0 ? 1 : 0);
    t.compute_ready_ns.assign(p + 3 * S, p + 3 * S + N);
    t.compute_start_ns.assign(p + 3 * S + N, p + 3 * S + 2 * N);
    t.compute_end_ns.assign(p + 3 * S + 2 * N, p + 3 * S + 3 * N);
  }
  return out;
}

namespace {

// Step k across the ranks that take part: first and last issue, last completion.
struct Span {
  double first_issue = std::numeric_limits<double>::infinity(), last_issue = 0, last_done = 0;
  bool measured() const { return first_issue != std::numeric_limits<double>::infinity(); }
};

Span span_of(std::size_t k, const std::vector<StepRef>& by_seq, const std::vector<RankTimeline>& ranks) {
  Span sp;
  if (by_seq[k].step->channels.empty()) return sp;  // a motif within one rank: no time in the plan either
  for (const auto& r : ranks) {
    if (r.idle[k]) continue;
    sp.first_issue = std::min(sp.first_issue, r.issued_ns[k]);
    sp.last_issue = std::max(sp.last_issue, r.issued_ns[k]);
    sp.last_done = std::max(sp.last_done, r.completed_ns[k]);
  }
  return sp;
}

}  // namespace

std::vector<double> step_times_in_run(const Active& active, const std::vector<RankTimeline>& ranks) {
  const auto by_seq = steps_by_seq(active);
  std::vector<double> out(by_seq.size(), -1.0);
  for (std::size_t k = 0; k < by_seq.size(); ++k) {
    const Span sp = span_of(k, by_seq, ranks);
    if (sp.measured()) out[k] = std::max(0.0, sp.last_done - sp.last_issue);
  }
  return out;
}

void retime_from_run(syndicate::Problem& problem, const Active& active, const std::vector<double>& took) {
  std::vector<std::vector<double>> chosen(problem.comms.size());  // per comm-op, per step of its chosen option
  for (const auto& st : active.planned.schedule.steps) {
    auto& v = chosen[static_cast<std::size_t>(st.comm)];
    if (v.size() <= static_cast<std::size_t>(st.step)) v.resize(static_cast<std::size_t>(st.step) + 1, -1.0);
    v[static_cast<std::size_t>(st.step)] = took[static_cast<std::size_t>(st.seq)];
  }
  // retime() reads each step's time through this before it writes it.
  syndicate::retime(problem, [&](int c, int o, int s) {
    const auto cc = static_cast<std::size_t>(c), ss = static_cast<std::size_t>(s);
    const double was = problem.comms[cc].options[static_cast<std::size_t>(o)].steps[ss].duration_ns;
    const bool measured = o == active.planned.plan[cc] && ss < chosen[cc].size() && chosen[cc][ss] >= 0;
    return measured ? chosen[cc][ss] : was;
  });
}

TimelineComparison compare_to_prediction(const syndicate::Problem& problem, const Active& active,
                                         const std::vector<RankTimeline>& ranks) {
  TimelineComparison c;
  const auto& sched = active.planned.schedule;
  const auto by_seq = steps_by_seq(active);
  for (const auto& s : sched.steps) {
    const Span sp = span_of(static_cast<std::size_t>(s.seq), by_seq, ranks);
    if (!sp.measured()) continue;
    ++c.steps;
    c.step_ns += std::max(0.0, sp.last_done - sp.last_issue);
    c.predicted_step_ns += s.end_ns - s.start_ns;
    c.issue_spread_ns += sp.last_issue - sp.first_issue;
  }
  for (int n : active.compute_order) {
    const auto k = static_cast<std::size_t>(n);
    double slowest = 0;
    for (const auto& r : ranks) slowest = std::max(slowest, r.compute_end_ns[k] - r.compute_start_ns[k]);
    c.compute_ns += slowest;
    c.predicted_compute_ns += problem.compute_ns[k];
  }
  for (const auto& r : ranks) {
    for (double t : r.completed_ns) c.makespan_ns = std::max(c.makespan_ns, t);
    for (double t : r.compute_end_ns) c.makespan_ns = std::max(c.makespan_ns, t);
  }
  c.predicted_makespan_ns = sched.makespan_ns;
  return c;
}

nlohmann::json to_json(const TimelineComparison& c) {
  return {{"steps", c.steps},
          {"step_ns", c.step_ns},
          {"predicted_step_ns", c.predicted_step_ns},
          {"step_time_ratio", c.predicted_step_ns > 0 ? c.step_ns / c.predicted_step_ns : 0.0},
          {"issue_spread_ns", c.issue_spread_ns},
          {"compute_ns", c.compute_ns},
          {"predicted_compute_ns", c.predicted_compute_ns},
          {"compute_time_ratio", c.predicted_compute_ns > 0 ? c.compute_ns / c.predicted_compute_ns : 0.0},
          {"makespan_ns", c.makespan_ns},
          {"predicted_makespan_ns", c.predicted_makespan_ns}};
}

nlohmann::json run_trace(const syndicate::Problem& problem, const Active& active,
                         const std::vector<RankTimeline>& ranks) {
  nlohmann::json trace = syndicate::plan_trace(problem, active.planned.plan, active.planned.schedule);
  auto& events = trace["traceEvents"];
  const auto by_seq = steps_by_seq(active);
  const auto& channels = problem.topology.channels;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const int pid = 10 + static_cast<int>(r);
    const auto& t = ranks[r];
    events.push_back({{"ph", "M"},
                      {"pid", pid},
                      {"name", "process_name"},
                      {"args", {{"name", fmt::format("rank {} (measured)", r)}}}});
    events.push_back({{"ph", "M"}, {"pid", pid}, {"tid", 0}, {"name", "thread_name"}, {"args", {{"name", "compute"}}}});
    for (std::size_t c = 0; c < channels.size(); ++c)
      events.push_back({{"ph", "M"},
                        {"pid", pid},
                        {"tid", 1 + static_cast<int>(c)},
                        {"name", "thread_name"},
                        {"args", {{"name", channels[c].name}}}});
    for (int n : active.compute_order) {
      const auto k = static_cast<std::size_t>(n);
      if (t.compute_start_ns[k] - t.compute_ready_ns[k] >= 1000)  // waited at least 1 us for comm-ops
        events.push_back({{"ph", "X"},
                          {"pid", pid},
                          {"tid", 0},
                          {"name", "wait for " + problem.dag.nodes[k].name},
                          {"ts", t.compute_ready_ns[k] / 1e3},
                          {"dur", (t.compute_start_ns[k] - t.compute_ready_ns[k]) / 1e3},
                          {"args", {{"node", n}}}});
      if (problem.compute_ns[k] <= 0) continue;  // as in the prediction: optimizer steps of no duration
      events.push_back({{"ph", "X"},
                        {"pid", pid},
                        {"tid", 0},
                        {"name", problem.dag.nodes[k].name},
                        {"ts", t.compute_start_ns[k] / 1e3},
                        {"dur", (t.compute_end_ns[k] - t.compute_start_ns[k]) / 1e3},
                        {"args", {{"node", n}}}});
    }
    for (std::size_t k = 0; k < by_seq.size(); ++k) {
      if (t.idle[k]) continue;
      const auto& op = *by_seq[k].op;
      const auto& st = *by_seq[k].step;
      const auto name = fmt::format("#{} {} {}", k, op.name, to_string(st.kind));
      for (int c : st.channels)
        events.push_back({{"ph", "X"},
                          {"pid", pid},
                          {"tid", 1 + c},
                          {"name", name},
                          {"ts", t.issued_ns[k] / 1e3},
                          {"dur", (t.completed_ns[k] - t.issued_ns[k]) / 1e3},
                          {"args", {{"seq", k}, {"comm_op", op.name}, {"group", st.group}, {"elements", st.count}}}});
    }
  }
  return trace;
}

}  // namespace chorus::eval
