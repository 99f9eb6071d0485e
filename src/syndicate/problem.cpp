#include "syndicate/problem.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/error.h"

namespace chorus::syndicate {

PlanChoice Problem::greedy_plan() const {
  PlanChoice plan;
  for (const auto& c : comms) plan.push_back(c.fastest);
  return plan;
}

PlanChoice Problem::standard_plan() const {
  PlanChoice plan;
  for (const auto& c : comms) plan.push_back(c.standard);
  return plan;
}

void Problem::check(const PlanChoice& plan, const std::string& where) const {
  if (plan.size() != comms.size())
    throw InputError(where, fmt::format("the plan has {} comm-ops, the workload {}", plan.size(), comms.size()));
  for (std::size_t i = 0; i < plan.size(); ++i)
    if (plan[i] < 0 || plan[i] >= static_cast<int>(comms[i].options.size()))
      throw InputError(where, fmt::format("comm-op {} ('{}'): option {} out of range 0..{}", i, comms[i].op.name,
                                          plan[i], comms[i].options.size() - 1));
}

namespace {

// The option of least solo time among those `eligible` accepts (the first on ties), or -1.
template <class Eligible>
int least_solo(const CommChoice& choice, Eligible eligible) {
  int best = -1;
  for (std::size_t o = 0; o < choice.options.size(); ++o)
    if (eligible(choice.options[o].option) &&
        (best < 0 || choice.options[o].solo_ns < choice.options[static_cast<std::size_t>(best)].solo_ns))
      best = static_cast<int>(o);
  return best;
}

// The two starting points of a comm-op's plan: the greedy planner's and today's stack's.
void choose_starts(CommChoice& choice) {
  choice.fastest = least_solo(choice, [](const PlanOption&) { return true; });
  choice.standard = least_solo(
      choice, [](const PlanOption& p) { return p.path == 0 && p.alt_path < 0 && p.spline == 1 && p.segments == 1; });
  if (choice.standard < 0) choice.standard = choice.fastest;  // a cost table without path 0's row
}

}  // namespace

void retime(Problem& problem, const std::function<double(int comm, int option, int step)>& duration) {
  for (std::size_t c = 0; c < problem.comms.size(); ++c) {
    auto& choice = problem.comms[c];
    for (std::size_t o = 0; o < choice.options.size(); ++o) {
      auto& opt = choice.options[o];
      for (std::size_t s = 0; s < opt.steps.size(); ++s)
        opt.steps[s].duration_ns = duration(static_cast<int>(c), static_cast<int>(o), static_cast<int>(s));
      opt.solo_ns = solo_time_ns(opt.steps);
    }
    choose_starts(choice);
  }
}

Problem make_problem(const workload::Dag& dag, const Topology& topo, const OptionSpace& space) {
  workload::validate(dag, static_cast<int>(topo.dims.size()), "workload '" + dag.name + "'");
  Problem p;
  p.dag = dag;
  p.topology = topo;
  const std::size_t n = dag.nodes.size();
  p.compute_ns.assign(n, 0.0);
  p.comm_of_node.assign(n, -1);
  p.successors.assign(n, {});
  for (std::size_t i = 0; i < n; ++i) {
    const auto& node = dag.nodes[i];
    for (int d : node.deps) p.successors[static_cast<std::size_t>(d)].push_back(static_cast<int>(i));
    if (node.kind == workload::NodeKind::kCompute) {
      p.compute_ns[i] = topo.compute.node_time_ns(node);
      continue;
    }
    CommChoice choice;
    choice.op = make_comm_op(dag, static_cast<int>(i), topo);
    // A multipath option's steps are spliced from its two single-path options', listed before it.
    const auto single = [&](PlanOption o, int path) -> const std::vector<Step>& {
      o.path = path;
      o.alt_path = -1;
      o.alt_segments = 0;
      for (const auto& known : choice.options)
        if (known.option == o) return known.steps;
      throw std::logic_error("make_problem: a multipath option before its single-path options");
    };
    for (const auto& o : enumerate_options(choice.op, topo, space)) {
      OptionCost cost;
      cost.option = o;
      cost.steps = o.alt_path < 0 ? option_steps(choice.op, o, topo)
                                  : multipath_steps(o, single(o, o.path), single(o, o.alt_path));
      cost.children.assign(cost.steps.size(), {});
      for (std::size_t s = 0; s < cost.steps.size(); ++s)
        for (int a : cost.steps[s].after) cost.children[static_cast<std::size_t>(a)].push_back(static_cast<int>(s));
      cost.solo_ns = solo_time_ns(cost.steps);
      choice.options.push_back(std::move(cost));
    }
    choose_starts(choice);
    p.comm_of_node[i] = static_cast<int>(p.comms.size());
    p.comms.push_back(std::move(choice));
  }
  return p;
}

}  // namespace chorus::syndicate
