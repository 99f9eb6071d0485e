#include "topoopt/coopt/parallelization_search.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/rng.h"
#include "sim/flow_network.h"
#include "topoopt/dag_traffic.h"
#include "workload/parallelism.h"

namespace chorus::topoopt {

std::string Strategy::key() const {
  std::string layers;
  for (bool b : layer_mp) layers += b ? '1' : '0';
  return fmt::format("mp={} layers={} placement={}", mp_npus, layers.empty() ? "model" : layers,
                     placement.empty() ? "identity" : fmt::format("{}", fmt::join(placement, ",")));
}

Strategy initial_strategy(const Job& job) {
  Strategy s;
  s.mp_npus = job.parallelism.mp_npus;
  s.layer_mp = job.parallelism.layer_mp;
  return s;
}

StrategyEvaluator::StrategyEvaluator(Job job, double batch_tolerance)
    : job_(std::move(job)), batch_tolerance_(batch_tolerance) {}

namespace {

// Whether the model says how its layers are split (some layer all-reduces its activations, as
// Megatron's pairs do). Without that, "every layer split" would move no activations at all.
bool has_split_pattern(const workload::Model& model) {
  return std::any_of(model.layers.begin(), model.layers.end(),
                     [](const workload::Layer& l) { return l.mp_all_reduce; });
}

}  // namespace

const StrategyEvaluator::Built& StrategyEvaluator::built(const Strategy& s) {
  if (s.mp_npus < 1 || job_.servers % s.mp_npus != 0)
    throw InputError("strategy",
                     fmt::format("model-parallel group of {} does not divide the {} servers", s.mp_npus, job_.servers));
  if (s.mp_npus > 1 && s.layer_mp.empty() && !has_split_pattern(job_.model))
    throw InputError("strategy",
                     fmt::format("{} does not say how its layers are split (no layer all-reduces its activations): "
                                 "a model-parallel group of {} needs per-layer choices",
                                 job_.model.name, s.mp_npus));
  Strategy shape = s;
  shape.placement.clear();
  const auto key = shape.key();
  auto it = dags_.find(key);
  if (it == dags_.end()) {
    auto config = job_.parallelism;
    config.mp_npus = s.mp_npus;
    config.layer_mp = s.layer_mp;
    // Same global batch for every strategy: a group of m trains m servers' samples together, so
    // a split layer's work and activations are those of m x the per-server batch (the DAG
    // generator divides the work by m); a replicated layer runs each server's own samples.
    auto model = job_.model;
    if (!s.layer_mp.empty() && s.layer_mp.size() != model.layers.size())
      throw InputError("strategy", fmt::format("per-layer choices for {} layers, the model has {}", s.layer_mp.size(),
                                               model.layers.size()));
    for (std::size_t l = 0; l < model.layers.size() && s.mp_npus > 1; ++l)
      if (s.layer_mp.empty() || s.layer_mp[l]) {
        auto& layer = model.layers[l];
        layer.forward_flops *= s.mp_npus;
        layer.input_elements *= s.mp_npus;
        layer.output_elements *= s.mp_npus;
      }
    auto b = std::make_unique<Built>();
    b->logical = workload::logical_network(config, job_.servers);
    b->dag = workload::build_training_dag(model, config, b->logical);
    it = dags_.emplace(key, std::move(b)).first;
  }
  return *it->second;
}

double StrategyEvaluator::iteration_ns(const Strategy& s, const net::GraphNetwork& fabric) {
  const auto& b = built(s);
  sim::FlowNetworkOptions options;
  options.batch_tolerance = batch_tolerance_;
  options.placement = s.placement;
  ++simulations_;
  const auto run = sim::simulate_workload(b.dag, b.logical, fabric, job_.compute, options);
  return run.result.total_ns / run.result.iterations;
}

Traffic StrategyEvaluator::traffic(const Strategy& s) {
  const auto& b = built(s);
  return traffic_from_dag(b.dag, b.logical, s.placement);
}

SearchResult parallelization_search(StrategyEvaluator& evaluator, const Strategy& start,
                                    const net::GraphNetwork& fabric, const SearchOptions& o) {
  const int n = evaluator.job().servers;
  const int layers = static_cast<int>(evaluator.job().model.layers.size());
  // Each step keeps its record (about 20 KB with the strategy it tried): a million steps is
  // hours of flow simulations and 20 GB; refuse more.
  if (o.max_steps < 0 || o.max_steps > 100000)
    throw InputError("max_steps", fmt::format("must be in 0..100000, got {}", o.max_steps));
  if (o.patience < 1 || o.patience > 100000)
    throw InputError("patience", fmt::format("must be in 1..100000, got {}", o.patience));
  require_memory(20e3 * o.max_steps, "max_steps", fmt::format("a search of {} steps", o.max_steps));
  if (!(o.temperature >= 0) || !std::isfinite(o.temperature))
    throw InputError("temperature", fmt::format("must be a finite number >= 0, got {}", o.temperature));
  std::vector<int> groups = o.mp_choices;
  if (groups.empty())
    for (int g = 1; g <= n; ++g)
      if (n % g == 0) groups.push_back(g);
  for (int g : groups)
    if (g < 1 || n % g != 0)
      throw InputError("mp_choices", fmt::format("group size {} does not divide the {} servers", g, n));

  std::unordered_map<std::string, double> cost;  // per strategy key on this fabric
  const auto evaluate = [&](const Strategy& s) {
    const auto key = s.key();
    const auto it = cost.find(key);
    if (it != cost.end()) return it->second;
    const double t = evaluator.iteration_ns(s, fabric);
    cost.emplace(key, t);
    return t;
  };

  SearchResult r;
  r.start = r.best = start;
  r.start_ns = r.best_ns = evaluate(start);
  Strategy current = start;
  double current_ns = r.start_ns;
  Rng rng(o.seed);
  int since_best = 0;
  while (r.steps < o.max_steps && since_best < o.patience) {
    // The moves that can change something from here.
    enum Move { kLayer, kGroup, kPlace };
    std::vector<Move> moves;
    if (o.move_layers && current.mp_npus > 1 && layers > 0) moves.push_back(kLayer);
    if (groups.size() > 1 || (groups.size() == 1 && groups[0] != current.mp_npus)) moves.push_back(kGroup);
    if (o.move_placement && n >= 2) moves.push_back(kPlace);
    if (moves.empty()) break;
    Strategy next = current;
    switch (moves[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(moves.size()) - 1))]) {
      case kLayer: {
        // The first layer move turns the model's own pattern into explicit choices.
        if (next.layer_mp.empty()) next.layer_mp.assign(static_cast<std::size_t>(layers), true);
        const auto l = static_cast<std::size_t>(rng.uniform_int(0, layers - 1));
        next.layer_mp[l] = !next.layer_mp[l];
        break;
      }
      case kGroup: {
        std::vector<int> others;
        for (int g : groups)
          if (g != current.mp_npus) others.push_back(g);
        next.mp_npus =
            others[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(others.size()) - 1))];
        if (next.mp_npus == 1) next.layer_mp.clear();  // no group: the choices mean nothing
        if (next.mp_npus > 1 && next.layer_mp.empty() && !has_split_pattern(evaluator.job().model))
          next.layer_mp.assign(static_cast<std::size_t>(layers), true);
        break;
      }
      case kPlace: {
        if (next.placement.empty()) {
          next.placement.resize(static_cast<std::size_t>(n));
          std::iota(next.placement.begin(), next.placement.end(), 0);
        }
        const auto a = static_cast<std::size_t>(rng.uniform_int(0, n - 1));
        auto b = static_cast<std::size_t>(rng.uniform_int(0, n - 2));
        if (b >= a) ++b;
        std::swap(next.placement[a], next.placement[b]);
        break;
      }
    }
    ++r.steps;
    const double t = evaluate(next);
    // Metropolis: always downhill, uphill with probability exp(-relative slowdown / temperature).
    const bool accept =
        t <= current_ns ||
        (o.temperature > 0 && rng.uniform01() < std::exp(-(t - current_ns) / (o.temperature * current_ns)));
    if (accept) {
      ++r.accepted;
      current = std::move(next);
      current_ns = t;
    }
    if (t < r.best_ns) {
      r.best_ns = t;
      r.best = current;
      ++r.improvements;
      since_best = 0;
    } else {
      ++since_best;
    }
    r.best_trace_ns.push_back(r.best_ns);
  }
  return r;
}

}  // namespace chorus::topoopt
