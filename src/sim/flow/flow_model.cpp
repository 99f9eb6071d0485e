#include "sim/flow/flow_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "core/error.h"
#include "sim/flow/water_filler.h"

namespace chorus::sim::flow {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::size_t kFetchAhead = 8;  // records fetched ahead in passes over scattered flows
}  // namespace

std::vector<double> max_min_rates(const std::vector<double>& capacity, const std::vector<const net::Path*>& paths) {
  WaterFiller filler(capacity.size());
  for (std::size_t f = 0; f < paths.size(); ++f) filler.add(static_cast<int>(f), *paths[f]);
  filler.run(capacity);
  std::vector<double> rate(paths.size());
  for (std::size_t f = 0; f < paths.size(); ++f) rate[f] = filler.rate(static_cast<int>(f));
  return rate;
}

void check_batch_tolerance(double tolerance) {
  if (!(tolerance >= 0.0) || !(tolerance < kMaxBatchTolerance))
    throw InputError("batch_tolerance", fmt::format("must be in [0, {}), got {}", kMaxBatchTolerance, tolerance));
}

FlowEngine::FlowEngine(const net::GraphNetwork& net, double batch_tolerance)
    : net_(net),
      tolerance_(batch_tolerance),
      capacity_(net.links.size()),
      capacity_bytes_(net.links.size(), 0.0),
      filler_(std::make_unique<WaterFiller>(net.links.size())) {
  check_batch_tolerance(batch_tolerance);
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
    const auto where = [f] { return fmt::format("flows[{}]", f); };  // named only when it is bad
    if (!(fl.bytes >= 0.0) || !std::isfinite(fl.bytes))
      throw InputError(where(), fmt::format("bytes must be >= 0, got {}", fl.bytes));
    if (!(fl.start_ns >= 0.0) || !std::isfinite(fl.start_ns)) throw InputError(where(), "start_ns must be >= 0");
    if (!(fl.delay_ns >= 0.0) || !std::isfinite(fl.delay_ns)) throw InputError(where(), "delay_ns must be >= 0");
    for (int li : fl.path)
      if (li < 0 || static_cast<std::size_t>(li) >= nl)
        throw InputError(where(), fmt::format("link {} out of range 0..{}", li, nl - 1));
    for (int a : fl.after)
      if (a < 0 || static_cast<std::size_t>(a) >= f)
        throw InputError(
            where(), fmt::format("after: flow {} is not an earlier flow (0..{})", a, static_cast<long long>(f) - 1));
  }
  res_.start_ns.resize(nf, kInf);
  res_.send_done_ns.resize(nf, kInf);
  res_.finish_ns.resize(nf, kInf);
  pending_.resize(nf, 0);
  ready_.resize(nf, 0.0);
  waiters_.resize(nf);
  at_.resize(nf, -1);
  filler_->reserve(nf);
  for (std::size_t f = admitted_; f < nf; ++f) {
    ready_[f] = std::max(flows_[f].start_ns, t_);
    for (int a : flows_[f].after) {
      const auto au = static_cast<std::size_t>(a);
      auto& w = waiters_[au];
      if (w.done) {
        ready_[f] = std::max(ready_[f], res_.finish_ns[au]);
      } else {
        if (w.first < 0) {
          w.first = static_cast<int>(f);
        } else {
          more_dependents_[a].push_back(static_cast<int>(f));
          w.more = 1;
        }
        ++pending_[f];
      }
    }
    if (pending_[f] == 0) events_.emplace(ready_[f], 1, static_cast<int>(f));
  }
  admitted_ = nf;
}

double FlowEngine::next_event_ns() const {
  const double queued = events_.empty() ? kInf : std::get<0>(events_.top());
  return std::min(queued, last_byte_.min());
}

void FlowEngine::settle() {
  const double dt = t_ - settled_;
  if (dt > 0.0) {
    // The filler's links and rates as its last run left them: settle() runs before any flow of
    // this time leaves or joins.
    const auto& busy = filler_->busy_links();
    for (int l : busy) {
      res_.link_bytes[static_cast<std::size_t>(l)] += filler_->link_rate(l) * dt;
      res_.link_busy_ns[static_cast<std::size_t>(l)] += dt;
    }
    if (window_ns_ > 0.0)
      for (int l : busy) add_window_bytes(l, filler_->link_rate(l), settled_, t_);
  }
  settled_ = t_;
}

void FlowEngine::record_link_windows(double window_ns) {
  if (!(window_ns > 0.0) || !std::isfinite(window_ns))
    throw InputError("link window", fmt::format("must be a positive time, got {} ns", window_ns));
  window_ns_ = window_ns;
}

std::vector<double>& FlowEngine::window(std::size_t i) {
  if (window_bytes_.size() <= i) window_bytes_.resize(i + 1, std::vector<double>(capacity_.size(), 0.0));
  return window_bytes_[i];
}

void FlowEngine::add_window_bytes(int link, double bytes_per_ns, double from_ns, double to_ns) {
  auto i = static_cast<std::size_t>(from_ns / window_ns_);
  while (from_ns < to_ns) {
    const double end = std::min(to_ns, (static_cast<double>(i) + 1.0) * window_ns_);
    if (end > from_ns) {  // (rounding can put from_ns on the previous window's end)
      window(i)[static_cast<std::size_t>(link)] += bytes_per_ns * (end - from_ns);
      from_ns = end;
    }
    ++i;
  }
}

void FlowEngine::finish_sending(int f, double at_ns) {
  const auto fu = static_cast<std::size_t>(f);
  res_.send_done_ns[fu] = at_ns;
  res_.finish_ns[fu] = at_ns + net::path_latency_ns(net_, flows_[fu].path) + flows_[fu].delay_ns;
  res_.makespan_ns = std::max(res_.makespan_ns, res_.finish_ns[fu]);
  events_.emplace(res_.finish_ns[fu], 0, f);
}

void FlowEngine::reallocate() {
  const bool full = filler_->next_run_full();
  filler_->run(capacity_);
  res_.full_reallocations += full ? 1 : 0;
  res_.refilled_flows += static_cast<std::int64_t>(filler_->refilled());
  res_.refilled_bundles += static_cast<std::int64_t>(filler_->refilled_bundles());
  // Only the flows whose rate the filler changed move their last byte (most of a re-fill after
  // departures gets its old rate back): one leaf each, or (many of them) all their leaves and the
  // tree in one pass. An unchanged rate keeps its anchor and last byte. After a full re-fill the
  // filler lists no changes: every flow's rate is read in one pass over the positions.
  const auto& changed = filler_->changed();
  const std::size_t n = changed.size();
  const bool listed = filler_->changes_listed();
  const bool rebuild = !listed || n > active_.size() / 8;
  const auto move = [&](std::size_t i, double rate) {  // the flow at position i sends at `rate` from now
    auto& s = send_[i];
    const double was = s.rate;
    s.left -= was * (t_ - s.anchor);
    s.anchor = t_;
    s.rate = rate;
    // The batch tolerance scales with the time a flow has been sending: a flow that waited
    // without a rate (no circuit yet) starts counting when it gets one.
    if (was == 0.0) s.since = t_;
    const double last = rate > 0.0 ? t_ + s.left / rate : kInf;
    if (rebuild)
      last_byte_.set_leaf(i, last);
    else
      last_byte_.set(i, last);
  };
  if (!listed) {
    for (std::size_t i = 0; i < active_.size(); ++i) {
      if (i + kFetchAhead < active_.size()) filler_->prefetch_bundle_rate(bundle_[i + kFetchAhead]);
      const double rate = filler_->bundle_rate(bundle_[i]);
      if (rate != send_[i].rate) move(i, rate);
    }
  } else {
    std::size_t j = 0;
    for (const auto& run : filler_->changed_runs()) {  // the flows of one bundle, and their new rate
      for (; j < run.end; ++j) {
        // The changed flows' records are scattered: fetch their positions, then their records,
        // ahead (the misses were a third of this function).
        if (j + 2 * kFetchAhead < n) __builtin_prefetch(&at_[static_cast<std::size_t>(changed[j + 2 * kFetchAhead])]);
        if (j + kFetchAhead < n) {
          const int ahead = at_[static_cast<std::size_t>(changed[j + kFetchAhead])];
          if (ahead >= 0) __builtin_prefetch(&send_[static_cast<std::size_t>(ahead)], 1);
        }
        move(static_cast<std::size_t>(at_[static_cast<std::size_t>(changed[j])]), run.rate);
      }
    }
    // A flow that joined a bundle whose rate this re-fill kept is not among the changes: it gets
    // the bundle's rate now.
    for (int f : filler_->joined_bundles()) {
      const int at = at_[static_cast<std::size_t>(f)];
      if (at < 0) continue;
      const double rate = filler_->rate(f);
      if (rate != send_[static_cast<std::size_t>(at)].rate) move(static_cast<std::size_t>(at), rate);
    }
  }
  if (rebuild) last_byte_.rebuild();
  ++res_.reallocations;
}

void FlowEngine::start_sending(int f) {
  const auto fu = static_cast<std::size_t>(f);
  at_[fu] = static_cast<int>(active_.size());
  active_.push_back(f);
  send_.push_back({flows_[fu].bytes, t_, 0.0, flows_[fu].bytes, res_.start_ns[fu]});
  last_byte_.push_back(kInf);  // until the reallocation that follows gives it a rate
  filler_->add(f, flows_[fu].path);
  bundle_.push_back(filler_->bundle(f));
}

void FlowEngine::stop_sending(std::size_t at) {
  const int f = active_[at];
  filler_->remove(f);
  at_[static_cast<std::size_t>(f)] = -1;
  if (at + 1 != active_.size()) {
    active_[at] = active_.back();
    send_[at] = send_.back();
    bundle_[at] = bundle_.back();
    last_byte_.set(at, last_byte_.at(active_.size() - 1));
    at_[static_cast<std::size_t>(active_[at])] = static_cast<int>(at);
  }
  active_.pop_back();
  send_.pop_back();
  bundle_.pop_back();
  last_byte_.pop_back();
}

void FlowEngine::step(std::vector<int>& completed) {
  const double t_next = next_event_ns();
  if (!std::isfinite(t_next))
    throw std::logic_error("FlowEngine::step: no event to process (idle, or flows without rate)");
  t_ = std::max(t_, t_next);
  ++res_.events;
  bool changed = false;
  if (last_byte_.min() <= t_) {
    // Flows whose last byte is sent now (the earliest, and others within rounding of the clock
    // or of their size) and, with a batch tolerance, those within it (their last byte within
    // tolerance x their time so far, which is at most tolerance x now).
    settle();
    const double slack = 1e-9 * t_;
    due_.clear();
    last_byte_.at_most(t_ + std::max(tolerance_ * t_, slack), due_);
    // Decide from the records alone first: most of the flows listed are within the tolerance of
    // the clock but have not sent long enough to be batched, and stay (nothing else of theirs is
    // fetched); then the flows that leave, their records and the filler's fetched ahead.
    leaving_.clear();
    for (std::size_t j = 0; j < due_.size(); ++j) {
      if (j + kFetchAhead < due_.size()) __builtin_prefetch(&send_[due_[j + kFetchAhead]]);
      const auto i = due_[j];
      const Sending& s = send_[i];
      const double last = last_byte_.at(i);
      const double left = s.left - s.rate * (t_ - s.anchor);
      if (last <= t_ + slack || left <= 1e-9 * s.bytes)
        leaving_.push_back({active_[i], t_, 0.0, false});
      else if (left <= s.rate * tolerance_ * (t_ - s.since))
        leaving_.push_back({active_[i], last, left, true});
    }
    for (std::size_t j = 0; j < leaving_.size(); ++j) {
      if (j + kFetchAhead < leaving_.size()) {
        const int ahead = leaving_[j + kFetchAhead].flow;
        __builtin_prefetch(&flows_[static_cast<std::size_t>(ahead)]);
        __builtin_prefetch(&at_[static_cast<std::size_t>(ahead)]);
        filler_->prefetch_member(ahead);
      }
      if (j + kFetchAhead / 2 < leaving_.size()) {  // and then its path and its bundle
        const int ahead = leaving_[j + kFetchAhead / 2].flow;
        __builtin_prefetch(flows_[static_cast<std::size_t>(ahead)].path.data());
        filler_->prefetch_bundle(ahead);
      }
      const Leaving& e = leaving_[j];
      if (e.batched) {  // its last byte when its rate sends it; its links are freed now
        for (int l : flows_[static_cast<std::size_t>(e.flow)].path) {
          res_.link_bytes[static_cast<std::size_t>(l)] += e.left;
          if (window_ns_ > 0.0)
            window(static_cast<std::size_t>(t_ / window_ns_))[static_cast<std::size_t>(l)] += e.left;
        }
      }
      finish_sending(e.flow, e.at);
      stop_sending(static_cast<std::size_t>(at_[static_cast<std::size_t>(e.flow)]));
    }
    changed = true;
  }
  while (!events_.empty() && std::get<0>(events_.top()) <= t_) {
    const auto [when, kind, f] = events_.top();
    events_.pop();
    if (!events_.empty()) __builtin_prefetch(&waiters_[static_cast<std::size_t>(std::get<2>(events_.top()))]);
    const auto fu = static_cast<std::size_t>(f);
    if (kind == 0) {
      auto& w = waiters_[fu];
      w.done = 1;
      completed.push_back(f);
      const auto release = [&, when = when](int d) {
        const auto du = static_cast<std::size_t>(d);
        ready_[du] = std::max(ready_[du], when);
        if (--pending_[du] == 0) events_.emplace(ready_[du], 1, d);
      };
      if (w.first >= 0) {
        release(w.first);
        w.first = -1;
      }
      if (w.more) {
        const auto it = more_dependents_.find(f);
        for (int d : it->second) release(d);
        more_dependents_.erase(it);
        w.more = 0;
      }
    } else {
      res_.start_ns[fu] = when;
      if (flows_[fu].path.empty() || flows_[fu].bytes == 0.0) {
        finish_sending(f, t_);
      } else {
        if (!changed) settle();
        start_sending(f);
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
    throw std::logic_error(
        fmt::format("FlowEngine::advance_to({}): now is {}, next event at {}", at_ns, t_, next_event_ns()));
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
  for (std::size_t l = 0; l < gbps.size(); ++l) {
    capacity_bytes_[l] += capacity_[l] * (t_ - capacity_since_);
    capacity_[l] = gbps[l] / 8.0;
  }
  capacity_since_ = t_;
  filler_->capacities_changed();
  reallocate();
}

void FlowEngine::reroute(const std::vector<std::pair<int, net::Path>>& moves) {
  for (const auto& [f, path] : moves) {
    if (f < 0 || static_cast<std::size_t>(f) >= admitted_)
      throw InputError(
          "reroute", fmt::format("flow {} is not an admitted flow (0..{})", f, static_cast<long long>(admitted_) - 1));
    if (std::isfinite(res_.send_done_ns[static_cast<std::size_t>(f)]))
      throw InputError("reroute", fmt::format("flow {} has sent its last byte", f));
    for (int li : path)
      if (li < 0 || static_cast<std::size_t>(li) >= capacity_.size())
        throw InputError("reroute", fmt::format("flow {}: link {} out of range 0..{}", f, li, capacity_.size() - 1));
  }
  if (moves.empty()) return;
  settle();
  for (const auto& [f, path] : moves) {
    const auto fu = static_cast<std::size_t>(f);
    flows_[fu].path = path;
    if (at_[fu] < 0) continue;  // not sending yet: it starts on the new path
    filler_->remove(f);
    filler_->add(f, flows_[fu].path);
    bundle_[static_cast<std::size_t>(at_[fu])] = filler_->bundle(f);
  }
  filler_->capacities_changed();  // a full re-fill
  reallocate();
  // A moved flow that joined a bundle whose rate stayed is not among the filler's changes: its
  // rate is the bundle's now.
  for (const auto& [f, path] : moves) {
    const int at = at_[static_cast<std::size_t>(f)];
    if (at < 0) continue;
    const auto i = static_cast<std::size_t>(at);
    const double rate = filler_->rate(f);
    if (rate == send_[i].rate) continue;
    send_[i].left -= send_[i].rate * (t_ - send_[i].anchor);
    send_[i].anchor = t_;
    if (send_[i].rate == 0.0) send_[i].since = t_;
    send_[i].rate = rate;
    last_byte_.set(i, rate > 0.0 ? t_ + send_[i].left / rate : kInf);
  }
}

double FlowEngine::remaining_bytes(int f) const {
  const int at = at_[static_cast<std::size_t>(f)];
  if (at < 0) return 0.0;
  const auto i = static_cast<std::size_t>(at);
  return std::max(0.0, send_[i].left - send_[i].rate * (t_ - send_[i].anchor));
}

std::vector<double> FlowEngine::link_capacity_bytes(double until_ns) const {
  std::vector<double> bytes(capacity_.size());
  for (std::size_t l = 0; l < bytes.size(); ++l)
    bytes[l] = capacity_bytes_[l] + capacity_[l] * std::max(0.0, until_ns - capacity_since_);
  return bytes;
}

double FlowEngine::rate_bytes_per_ns(int f) const {
  const int at = at_[static_cast<std::size_t>(f)];
  return at < 0 ? 0.0 : send_[static_cast<std::size_t>(at)].rate;
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
