// TopoOpt's alternating optimization (topoopt/coopt): the MCMC parallelization search against a
// brute-force enumeration of every strategy on a small job, and the bookkeeping of the
// alternating rounds (the best pair re-simulated gives the reported time; degrees stay <= d).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "core/error.h"
#include "net/graph/fabrics.h"
#include "topoopt/coopt/alternating_optimization.h"
#include "topoopt/coopt/parallelization_search.h"

namespace chorus::topoopt {
namespace {

// Three fully connected layers whose gradients (data parallel) and activations (model parallel)
// are both worth moving: which layers to split, over how many servers, depends on the network.
Job small_job(int servers) {
  Job job;
  job.model.name = "three";
  job.model.batch_per_npu = 64;
  job.model.bytes_per_element = 4;
  const double sizes[] = {2e6, 8e4, 5e5};  // parameters
  for (int i = 0; i < 3; ++i) {
    workload::Layer l;
    l.name = "fc" + std::to_string(i);
    l.params = sizes[i];
    l.forward_flops = 2.0 * sizes[i] * 64;
    l.input_elements = 64.0 * 1024 * (i + 1);
    l.output_elements = 64.0 * 1024 * (3 - i);
    job.model.layers.push_back(l);
  }
  job.parallelism.iterations = 1;
  job.servers = servers;
  job.compute.peak_tflops = 10;
  return job;
}

// A directed ring in the order 0 -> 2 -> 1 -> 3 -> 0 (so the placement matters), 10 Gb/s.
net::GraphNetwork twisted_ring() {
  net::GraphNetwork g;
  g.name = "ring 0-2-1-3";
  g.servers = 4;
  for (auto [a, b] : {std::pair{0, 2}, {2, 1}, {1, 3}, {3, 0}}) g.add_link(a, b, 10.0);
  return g;
}

TEST(ParallelizationSearch, FindsTheBruteForceOptimum) {
  StrategyEvaluator evaluator(small_job(4), 0.0);
  const auto fabric = twisted_ring();
  // Every strategy the search can reach: group sizes 1, 2, 4; the model's pattern or any of the
  // 8 explicit layer choices; all 24 placements.
  double best = std::numeric_limits<double>::infinity();
  std::string best_key;
  std::vector<int> perm = {0, 1, 2, 3};
  // The model has no split pattern of its own, so a group larger than 1 takes explicit choices.
  std::vector<std::vector<bool>> layer_choices = {{}};
  for (int mask = 0; mask < 8; ++mask) layer_choices.push_back({(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0});
  int evaluated = 0;
  do {
    for (int mp : {1, 2, 4})
      for (const auto& layers : layer_choices) {
        if (mp > 1 && layers.empty()) continue;
        Strategy s{mp, layers, perm};
        const double t = evaluator.iteration_ns(s, fabric);
        ++evaluated;
        if (t < best) {
          best = t;
          best_key = s.key();
        }
      }
  } while (std::next_permutation(perm.begin(), perm.end()));
  ASSERT_EQ(evaluated, 24 * (9 + 8 + 8));

  SearchOptions o;
  o.max_steps = 3000;
  o.patience = 3000;
  o.seed = 7;
  StrategyEvaluator fresh(small_job(4), 0.0);
  const auto r = parallelization_search(fresh, initial_strategy(fresh.job()), fabric, o);
  EXPECT_DOUBLE_EQ(r.best_ns, best) << "search: " << r.best.key() << ", brute force: " << best_key;
  // The search's best, simulated again, is what it reported.
  EXPECT_DOUBLE_EQ(evaluator.iteration_ns(r.best, fabric), r.best_ns);
  // The job's own strategy (data parallel, NPU i on server i) is not the optimum here.
  EXPECT_LT(r.best_ns, r.start_ns);
  // The best so far never rises; the cache means fewer simulations than proposals.
  EXPECT_TRUE(std::is_sorted(r.best_trace_ns.rbegin(), r.best_trace_ns.rend()));
  EXPECT_LT(fresh.simulations(), r.steps);
}

TEST(ParallelizationSearch, SeededAndBounded) {
  const auto fabric = twisted_ring();
  SearchOptions o;
  o.max_steps = 40;
  o.patience = 1000;
  o.seed = 3;
  StrategyEvaluator a(small_job(4)), b(small_job(4));
  const auto ra = parallelization_search(a, initial_strategy(a.job()), fabric, o);
  const auto rb = parallelization_search(b, initial_strategy(b.job()), fabric, o);
  EXPECT_EQ(ra.best.key(), rb.best.key());
  EXPECT_EQ(ra.best_trace_ns, rb.best_trace_ns);
  EXPECT_EQ(ra.accepted, rb.accepted);
  EXPECT_EQ(ra.steps, 40);
  // Patience: a search that cannot improve on its start stops after `patience` proposals.
  o.patience = 5;
  o.max_steps = 1000;
  const auto rc = parallelization_search(a, ra.best, fabric, o);
  EXPECT_LE(rc.best_ns, ra.best_ns);
  EXPECT_GE(rc.steps, 5);
  EXPECT_LT(rc.steps, 1000);
}

TEST(ParallelizationSearch, BadOptionsAreNamed) {
  StrategyEvaluator e(small_job(4));
  const auto fabric = twisted_ring();
  SearchOptions o;
  o.patience = 0;
  EXPECT_THROW(parallelization_search(e, initial_strategy(e.job()), fabric, o), InputError);
  o = {};
  o.mp_choices = {3};
  EXPECT_THROW(parallelization_search(e, initial_strategy(e.job()), fabric, o), InputError);
  EXPECT_THROW(e.iteration_ns(Strategy{3, {}, {}}, fabric), InputError);
  EXPECT_THROW(e.iteration_ns(Strategy{2, {true}, {}}, fabric), InputError);
  EXPECT_THROW(e.iteration_ns(Strategy{2, {}, {}}, fabric), InputError);  // no split pattern of its own
  EXPECT_THROW(e.iteration_ns(Strategy{1, {}, {0, 1, 1, 2}}, fabric), InputError);
}

TEST(AlternatingOptimization, BestPairIsConsistentAndDegreesHold) {
  AlternatingOptions o;
  o.degree = 2;
  o.gbps = 10;
  o.rounds = 3;
  o.search.max_steps = 25;
  o.search.patience = 10;
  const auto job = small_job(8);
  const auto r = alternating_optimization(job, o);
  ASSERT_GE(r.rounds.size(), 2u);
  EXPECT_LE(r.best_ns, r.own_ns);
  for (const auto& round : r.rounds) {
    EXPECT_LE(r.best_ns, round.iteration_ns);
    if (round.round > 0) {
      EXPECT_LE(r.best_ns, round.searched_ns);
    }
    // TopologyFinder's invariant: at most d links out of and into every server.
    std::vector<int> out(8, 0), in(8, 0);
    for (auto [a, b] : round.topology.edges) {
      ++out[static_cast<std::size_t>(a)];
      ++in[static_cast<std::size_t>(b)];
    }
    EXPECT_LE(*std::max_element(out.begin(), out.end()), 2);
    EXPECT_LE(*std::max_element(in.begin(), in.end()), 2);
  }
  // Round 0 is the sequential approach: searched on the ideal Fat-tree of d x B per server.
  StrategyEvaluator check(job);
  EXPECT_DOUBLE_EQ(check.iteration_ns(r.rounds[0].strategy, net::ideal_fat_tree(8, 2, 10)), r.rounds[0].searched_ns);
  // The reported best strategy on the reported best topology, simulated afresh.
  EXPECT_DOUBLE_EQ(check.iteration_ns(r.best_strategy, topology_fabric(r.best_topology, o.gbps)), r.best_ns);
  // Only a round that improved nothing ends the loop early.
  for (std::size_t i = 1; i + 1 < r.rounds.size(); ++i) EXPECT_TRUE(r.rounds[i].improved);
  // Same inputs, same outputs.
  EXPECT_EQ(alternating_csv(alternating_optimization(job, o)), alternating_csv(r));
  o.rounds = -1;
  EXPECT_THROW(alternating_optimization(job, o), InputError);
}

}  // namespace
}  // namespace chorus::topoopt
