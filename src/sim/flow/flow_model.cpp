#include "sim/flow/flow_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "core/error.h"

namespace chorus::sim::flow {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

// Progressive filling over the links that carry the given flows only. Scratch arrays are sized to
// all links and reset only where touched. Repeatedly, the link with the smallest fair share
// (capacity left / unfrozen flows) is the bottleneck of its unfrozen flows: they get that share,
// are frozen, and leave the other links of their paths. A link's share never falls when flows
// frozen at the (global minimum) share leave it, so the minimum only grows and links tied at it
// can be settled in any order. Two ways to find the minimum, chosen per call:
//  - rounds that scan the live links: O(R x L + P), R = the distinct share levels, L = the links
//    touched; best when many flows share few links (an all-to-all: P ~ 70,000 entries on ~500
//    links); used first, while the scans cost less than the heap would;
//  - a heap of links keyed by share (lazy deletion by version): O(P log P), P = the summed path
//    lengths; finishes what the rounds left (rings over many servers: few flows per link).
class WaterFiller {
 public:
  explicit WaterFiller(std::size_t links) : cap_(links), cnt_(links, 0), version_(links, 0), flows_on_(links) {}

  void run(const std::vector<double>& capacity, const std::vector<const net::Path*>& paths, std::vector<double>& rate) {
    rate.assign(paths.size(), 0.0);
    frozen_.assign(paths.size(), 0);
    touched_.clear();
    std::size_t entries = 0;
    for (std::size_t f = 0; f < paths.size(); ++f)
      for (int li : *paths[f]) {
        const auto l = static_cast<std::size_t>(li);
        if (cnt_[l] == 0 && flows_on_[l].empty()) {
          touched_.push_back(l);
          cap_[l] = capacity[l];
        }
        ++cnt_[l];
        flows_on_[l].push_back(static_cast<int>(f));
        ++entries;
      }
    // Rounds first, while their scans cost less than the heap would in all (P log2 P); then the
    // heap finishes from where they stopped.
    double budget = static_cast<double>(entries) * std::log2(static_cast<double>(entries) + 2.0);
    by_rounds(paths, rate, budget);
    if (!live_.empty()) by_heap(paths, rate);
    for (auto l : touched_) {
      cnt_[l] = 0;
      flows_on_[l].clear();
    }
  }

 private:
  // Every unfrozen flow through link l gets `share` and leaves the links of its path; calls
  // changed(m) for every other link m whose share moved.
  template <typename Changed>
  void freeze(std::size_t l, double share, const std::vector<const net::Path*>& paths, std::vector<double>& rate,
              Changed&& changed) {
    for (int f : flows_on_[l]) {
      const auto fu = static_cast<std::size_t>(f);
      if (frozen_[fu]) continue;
      frozen_[fu] = 1;
      rate[fu] = share;
      for (int mi : *paths[fu]) {
        const auto m = static_cast<std::size_t>(mi);
        cap_[m] = std::max(0.0, cap_[m] - share);
        --cnt_[m];
        if (m != l) changed(m);
      }
    }
  }

  // Settles the links in live_ (those with unfrozen flows) by the heap.
  void by_heap(const std::vector<const net::Path*>& paths, std::vector<double>& rate) {
    using Entry = std::tuple<double, std::size_t, std::uint64_t>;  // share, link, version
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
    for (auto l : live_)
      if (cnt_[l] > 0) heap.emplace(cap_[l] / cnt_[l], l, version_[l]);
    while (!heap.empty()) {
      const auto [share, l, ver] = heap.top();
      heap.pop();
      if (ver != version_[l] || cnt_[l] == 0) continue;
      ++version_[l];
      freeze(l, share, paths, rate, [&](std::size_t m) {
        ++version_[m];
        if (cnt_[m] > 0) heap.emplace(cap_[m] / cnt_[m], m, version_[m]);
      });
    }
  }

  // Settles bottleneck levels by scanning until done (live_ left empty) or until the scans have
  // cost `budget` link visits (live_ left holding the links still to settle).
  void by_rounds(const std::vector<const net::Path*>& paths, std::vector<double>& rate, double budget) {
    live_ = touched_;
    double spent = 0;
    for (;;) {
      spent += static_cast<double>(live_.size());
      if (spent > budget) return;
      double lowest = std::numeric_limits<double>::infinity();
      std::size_t kept = 0;
      for (auto l : live_)
        if (cnt_[l] > 0) {
          live_[kept++] = l;
          lowest = std::min(lowest, cap_[l] / cnt_[l]);
        }
      live_.resize(kept);
      if (live_.empty()) break;
      for (auto l : live_) {
        if (cnt_[l] == 0) continue;
        const double share = cap_[l] / cnt_[l];
        if (share > lowest) continue;
        freeze(l, share, paths, rate, [](std::size_t) {});
      }
    }
  }

  std::vector<double> cap_;
  std::vector<int> cnt_;
  std::vector<std::uint64_t> version_;
  std::vector<std::vector<int>> flows_on_;
  std::vector<std::size_t> touched_, live_;
  std::vector<char> frozen_;
};

std::vector<double> max_min_rates(const std::vector<double>& capacity, const std::vector<const net::Path*>& paths) {
  WaterFiller filler(capacity.size());
  std::vector<double> rate;
  filler.run(capacity, paths, rate);
  return rate;
}

FlowEngine::FlowEngine(const net::GraphNetwork& net, double batch_tolerance)
    : net_(net),
      tolerance_(batch_tolerance),
      capacity_(net.links.size()),
      next_send_done_(kInf),
      link_rate_(net.links.size(), 0.0),
      in_busy_(net.links.size(), 0),
      filler_(std::make_unique<WaterFiller>(net.links.size())) {
  if (!(batch_tolerance >= 0.0) || !(batch_tolerance < 1.0))
    throw InputError("batch_tolerance", fmt::format("must be in [0, 1), got {}", batch_tolerance));
  for (std::size_t l = 0; l < capacity_.size(); ++l) capacity_[l] = net.links[l].gbps / 8.0;  // Gbit/s = bytes/ns * 8
  res_.link_bytes.assign(capacity_.size(), 0.0);
  res_.link_busy_ns.assign(capacity_.size(), 0.0);
}

FlowEngine::~FlowEngine() = default;

void FlowEngine::admit() {
  const std::size_t nf = flows_.size();
  const std::size_t nl = capacity_.size();
  // Validate the whole batch first, so a bad flow leaves the engine as it was.
  for (std::size_t f = admitted_; f < nf; ++f) {
    const auto& fl = flows_[f];
    const auto where = fmt::format("flows[{}]", f);
    if (!(fl.bytes >= 0.0) || !std::isfinite(fl.bytes)) throw InputError(where, fmt::format("bytes must be >= 0, got {}", fl.bytes));
    if (!(fl.start_ns >= 0.0) || !std::isfinite(fl.start_ns)) throw InputError(where, "start_ns must be >= 0");
    if (!(fl.delay_ns >= 0.0) || !std::isfinite(fl.delay_ns)) throw InputError(where, "delay_ns must be >= 0");
    for (int li : fl.path)
      if (li < 0 || static_cast<std::size_t>(li) >= nl) throw InputError(where, fmt::format("link {} out of range 0..{}", li, nl - 1));
    for (int a : fl.after)
      if (a < 0 || static_cast<std::size_t>(a) >= f)
        throw InputError(where, fmt::format("after: flow {} is not an earlier flow (0..{})", a, static_cast<long long>(f) - 1));
  }
  res_.start_ns.resize(nf, kInf);
  res_.send_done_ns.resize(nf, kInf);
  res_.finish_ns.resize(nf, kInf);
  pending_.resize(nf, 0);
  ready_.resize(nf, 0.0);
  dependents_.resize(nf);
  completed_.resize(nf, 0);
  remaining_.resize(nf, 0.0);
  rate_.resize(nf, 0.0);
  for (std::size_t f = admitted_; f < nf; ++f) {
    ready_[f] = std::max(flows_[f].start_ns, t_);
    for (int a : flows_[f].after) {
      const auto au = static_cast<std::size_t>(a);
      if (completed_[au]) {
        ready_[f] = std::max(ready_[f], res_.finish_ns[au]);
      } else {
        dependents_[au].push_back(static_cast<int>(f));
        ++pending_[f];
      }
    }
    if (pending_[f] == 0) events_.emplace(ready_[f], 1, static_cast<int>(f));
  }
  admitted_ = nf;
}

double FlowEngine::next_event_ns() const {
  const double queued = events_.empty() ? kInf : std::get<0>(events_.top());
  return std::min(queued, next_send_done_);
}

void FlowEngine::settle() {
  const double dt = t_ - settled_;
  if (dt > 0.0) {
    for (int f : active_) remaining_[static_cast<std::size_t>(f)] -= rate_[static_cast<std::size_t>(f)] * dt;
    for (int l : busy_links_) {
      res_.link_bytes[static_cast<std::size_t>(l)] += link_rate_[static_cast<std::size_t>(l)] * dt;
      res_.link_busy_ns[static_cast<std::size_t>(l)] += dt;
    }
  }
  settled_ = t_;
}

void FlowEngine::finish_sending(int f) {
  const auto fu = static_cast<std::size_t>(f);
  res_.send_done_ns[fu] = t_;
  res_.finish_ns[fu] = t_ + net::path_latency_ns(net_, flows_[fu].path) + flows_[fu].delay_ns;
  res_.makespan_ns = std::max(res_.makespan_ns, res_.finish_ns[fu]);
  events_.emplace(res_.finish_ns[fu], 0, f);
}

void FlowEngine::reallocate() {
  // The order of active_ (start order, holes filled from the back) is a function of the input
  // alone, so rounding, which depends on it, is the same in every run.
  paths_.clear();
  for (int f : active_) paths_.push_back(&flows_[static_cast<std::size_t>(f)].path);
  filler_->run(capacity_, paths_, rates_);
  for (int l : busy_links_) {
    link_rate_[static_cast<std::size_t>(l)] = 0.0;
    in_busy_[static_cast<std::size_t>(l)] = 0;
  }
  busy_links_.clear();
  next_send_done_ = kInf;
  next_send_done_flow_ = -1;
  for (std::size_t i = 0; i < active_.size(); ++i) {
    const int f = active_[i];
    const auto fu = static_cast<std::size_t>(f);
    rate_[fu] = rates_[i];
    for (int l : flows_[fu].path) {
      if (!in_busy_[static_cast<std::size_t>(l)]) {
        in_busy_[static_cast<std::size_t>(l)] = 1;
        busy_links_.push_back(l);
      }
      link_rate_[static_cast<std::size_t>(l)] += rates_[i];
    }
    const double done = rate_[fu] > 0.0 ? t_ + remaining_[fu] / rate_[fu] : kInf;
    if (done < next_send_done_) {
      next_send_done_ = done;
      next_send_done_flow_ = f;
    }
  }
  ++res_.reallocations;
}

void FlowEngine::step(std::vector<int>& completed) {
  const double t_next = next_event_ns();
  if (!std::isfinite(t_next)) throw std::logic_error("FlowEngine::step: no event to process (idle, or flows without rate)");
  t_ = std::max(t_, t_next);
  ++res_.events;
  bool changed = false;
  if (next_send_done_ <= t_) {
    // Flows whose last byte is sent now: the earliest exactly, others within rounding.
    settle();
    for (std::size_t i = 0; i < active_.size();) {
      const int f = active_[i];
      const auto fu = static_cast<std::size_t>(f);
      if (f == next_send_done_flow_ || remaining_[fu] <= 1e-9 * flows_[fu].bytes ||
          remaining_[fu] <= rate_[fu] * tolerance_ * (t_ - res_.start_ns[fu])) {
        finish_sending(f);
        active_[i] = active_.back();
        active_.pop_back();
      } else {
        ++i;
      }
    }
    changed = true;
  }
  while (!events_.empty() && std::get<0>(events_.top()) <= t_) {
    const auto [when, kind, f] = events_.top();
    events_.pop();
    const auto fu = static_cast<std::size_t>(f);
    if (kind == 0) {
      completed_[fu] = 1;
      completed.push_back(f);
      for (int d : dependents_[fu]) {
        const auto du = static_cast<std::size_t>(d);
        ready_[du] = std::max(ready_[du], when);
        if (--pending_[du] == 0) events_.emplace(ready_[du], 1, d);
      }
      dependents_[fu] = {};
    } else {
      res_.start_ns[fu] = when;
      if (flows_[fu].path.empty() || flows_[fu].bytes == 0.0) {
        finish_sending(f);
      } else {
        if (!changed) settle();
        remaining_[fu] = flows_[fu].bytes;
        active_.push_back(f);
        changed = true;
      }
    }
  }
  if (changed) {
    settle();
    reallocate();
  }
}

void FlowEngine::advance_to(double at_ns) {
  if (!(at_ns >= t_) || (!idle() && at_ns > next_event_ns()))
    throw std::logic_error(fmt::format("FlowEngine::advance_to({}): now is {}, next event at {}", at_ns, t_, next_event_ns()));
  t_ = at_ns;
  settle();
}

void FlowEngine::set_capacities(const std::vector<double>& gbps) {
  if (gbps.size() != capacity_.size())
    throw InputError("set_capacities", fmt::format("{} capacities for {} links", gbps.size(), capacity_.size()));
  for (std::size_t l = 0; l < gbps.size(); ++l)
    if (!(gbps[l] >= 0.0) || !std::isfinite(gbps[l]))
      throw InputError("set_capacities", fmt::format("link {}: {} Gb/s", l, gbps[l]));
  settle();
  for (std::size_t l = 0; l < gbps.size(); ++l) capacity_[l] = gbps[l] / 8.0;
  reallocate();
}

double FlowEngine::remaining_bytes(int f) const {
  const auto fu = static_cast<std::size_t>(f);
  return std::max(0.0, remaining_[fu] - rate_[fu] * (t_ - settled_));
}

void FlowEngine::run() {
  std::vector<int> completed;
  while (!idle()) {
    completed.clear();
    step(completed);
  }
}

FlowResult simulate_flows(const net::GraphNetwork& net, const std::vector<Flow>& flows) {
  FlowEngine engine(net);
  engine.flows() = flows;
  engine.admit();
  engine.run();
  return engine.result();
}

}  // namespace chorus::sim::flow
