#include "sim/flow/flow_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <tuple>

#include <fmt/format.h>

#include "core/error.h"

namespace chorus::sim::flow {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Progressive filling over the links that carry the given flows only. Scratch arrays are sized to
// all links and reset only where touched, so one call costs O(sum of path lengths * log).
class WaterFiller {
 public:
  explicit WaterFiller(std::size_t links) : cap_(links), cnt_(links, 0), version_(links, 0), flows_on_(links) {}

  void run(const std::vector<double>& capacity, const std::vector<const net::Path*>& paths, std::vector<double>& rate) {
    rate.assign(paths.size(), 0.0);
    touched_.clear();
    for (std::size_t f = 0; f < paths.size(); ++f)
      for (int li : *paths[f]) {
        const auto l = static_cast<std::size_t>(li);
        if (cnt_[l] == 0 && flows_on_[l].empty()) {
          touched_.push_back(l);
          cap_[l] = capacity[l];
        }
        ++cnt_[l];
        flows_on_[l].push_back(static_cast<int>(f));
      }
    using Entry = std::tuple<double, std::size_t, std::uint64_t>;  // share, link, version
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
    for (auto l : touched_) heap.emplace(cap_[l] / cnt_[l], l, version_[l]);
    std::vector<char> frozen(paths.size(), 0);
    while (!heap.empty()) {
      const auto [share, l, ver] = heap.top();
      heap.pop();
      if (ver != version_[l] || cnt_[l] == 0) continue;
      // Every unfrozen flow through the bottleneck link l gets the fair share.
      for (int f : flows_on_[l]) {
        if (frozen[static_cast<std::size_t>(f)]) continue;
        frozen[static_cast<std::size_t>(f)] = 1;
        rate[static_cast<std::size_t>(f)] = share;
        for (int mi : *paths[static_cast<std::size_t>(f)]) {
          const auto m = static_cast<std::size_t>(mi);
          cap_[m] = std::max(0.0, cap_[m] - share);
          --cnt_[m];
          ++version_[m];
          if (cnt_[m] > 0 && m != l) heap.emplace(cap_[m] / cnt_[m], m, version_[m]);
        }
      }
    }
    for (auto l : touched_) {
      cnt_[l] = 0;
      flows_on_[l].clear();
    }
  }

 private:
  std::vector<double> cap_;
  std::vector<int> cnt_;
  std::vector<std::uint64_t> version_;
  std::vector<std::vector<int>> flows_on_;
  std::vector<std::size_t> touched_;
};

}  // namespace

std::vector<double> max_min_rates(const std::vector<double>& capacity, const std::vector<const net::Path*>& paths) {
  WaterFiller filler(capacity.size());
  std::vector<double> rate;
  filler.run(capacity, paths, rate);
  return rate;
}

FlowResult simulate_flows(const net::GraphNetwork& net, const std::vector<Flow>& flows) {
  const std::size_t nf = flows.size();
  const std::size_t nl = net.links.size();
  std::vector<double> capacity(nl);
  for (std::size_t l = 0; l < nl; ++l) capacity[l] = net.links[l].gbps / 8.0;  // Gbit/s = bytes/ns * 8

  std::vector<int> pending(nf, 0);
  std::vector<std::vector<int>> dependents(nf);
  for (std::size_t f = 0; f < nf; ++f) {
    const auto& fl = flows[f];
    const auto where = fmt::format("flows[{}]", f);
    if (!(fl.bytes >= 0.0) || !std::isfinite(fl.bytes)) throw InputError(where, fmt::format("bytes must be >= 0, got {}", fl.bytes));
    if (!(fl.start_ns >= 0.0) || !std::isfinite(fl.start_ns)) throw InputError(where, "start_ns must be >= 0");
    for (int li : fl.path)
      if (li < 0 || static_cast<std::size_t>(li) >= nl) throw InputError(where, fmt::format("link {} out of range 0..{}", li, nl - 1));
    for (int a : fl.after) {
      if (a < 0 || static_cast<std::size_t>(a) >= nf) throw InputError(where, fmt::format("after: flow {} out of range", a));
      dependents[static_cast<std::size_t>(a)].push_back(static_cast<int>(f));
      ++pending[f];
    }
  }

  FlowResult res;
  res.start_ns.assign(nf, kInf);
  res.send_done_ns.assign(nf, kInf);
  res.finish_ns.assign(nf, kInf);
  res.link_bytes.assign(nl, 0.0);
  res.link_busy_ns.assign(nl, 0.0);

  // Event heap: (time, kind, flow); kind 0 = finished (releases dependents), 1 = start.
  using Event = std::tuple<double, int, int>;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::vector<double> ready(nf, 0.0);
  for (std::size_t f = 0; f < nf; ++f) {
    ready[f] = flows[f].start_ns;
    if (pending[f] == 0) events.emplace(flows[f].start_ns, 1, static_cast<int>(f));
  }

  std::vector<int> active;  // flows with bytes left
  std::vector<double> remaining(nf, 0.0), rate(nf, 0.0);
  std::vector<int> busy_links;  // links with positive aggregate rate
  std::vector<double> link_rate(nl, 0.0);
  std::vector<char> in_busy(nl, 0);
  WaterFiller filler(nl);
  std::vector<const net::Path*> paths;
  std::vector<double> rates;
  std::size_t done = 0;
  double t = 0.0;

  auto finish_flow = [&](int f, double when) {
    const auto fu = static_cast<std::size_t>(f);
    res.send_done_ns[fu] = when;
    res.finish_ns[fu] = when + net::path_latency_ns(net, flows[fu].path);
    res.makespan_ns = std::max(res.makespan_ns, res.finish_ns[fu]);
    events.emplace(res.finish_ns[fu], 0, f);
  };

  while (!events.empty() || !active.empty()) {
    // Next event: the earliest of the queued events and the earliest last byte.
    double t_next = events.empty() ? kInf : std::get<0>(events.top());
    int first_done = -1;
    for (int f : active) {
      const double tf = t + remaining[static_cast<std::size_t>(f)] / rate[static_cast<std::size_t>(f)];
      if (tf < t_next) {
        t_next = tf;
        first_done = f;
      }
    }
    const double dt = t_next - t;
    if (dt > 0.0) {
      for (int f : active) remaining[static_cast<std::size_t>(f)] -= rate[static_cast<std::size_t>(f)] * dt;
      for (int l : busy_links) {
        res.link_bytes[static_cast<std::size_t>(l)] += link_rate[static_cast<std::size_t>(l)] * dt;
        res.link_busy_ns[static_cast<std::size_t>(l)] += dt;
      }
    }
    t = t_next;
    ++res.events;
    bool changed = false;
    // Flows whose last byte is sent now (the argmin exactly; others within rounding).
    for (std::size_t i = 0; i < active.size();) {
      const int f = active[i];
      const auto fu = static_cast<std::size_t>(f);
      if (f == first_done || remaining[fu] <= 1e-9 * flows[fu].bytes) {
        finish_flow(f, t);
        active[i] = active.back();
        active.pop_back();
        changed = true;
      } else {
        ++i;
      }
    }
    while (!events.empty() && std::get<0>(events.top()) <= t) {
      const auto [when, kind, f] = events.top();
      events.pop();
      const auto fu = static_cast<std::size_t>(f);
      if (kind == 0) {
        ++done;
        for (int d : dependents[fu]) {
          const auto du = static_cast<std::size_t>(d);
          ready[du] = std::max(ready[du], when);
          if (--pending[du] == 0) events.emplace(ready[du], 1, d);
        }
      } else {
        res.start_ns[fu] = when;
        if (flows[fu].path.empty() || flows[fu].bytes == 0.0) {
          finish_flow(f, when);
        } else {
          remaining[fu] = flows[fu].bytes;
          active.push_back(f);
          changed = true;
        }
      }
    }
    if (changed) {
      // Deterministic order: progressive filling's result does not depend on it, but rounding does.
      std::sort(active.begin(), active.end());
      paths.clear();
      for (int f : active) paths.push_back(&flows[static_cast<std::size_t>(f)].path);
      filler.run(capacity, paths, rates);
      for (int l : busy_links) {
        link_rate[static_cast<std::size_t>(l)] = 0.0;
        in_busy[static_cast<std::size_t>(l)] = 0;
      }
      busy_links.clear();
      for (std::size_t i = 0; i < active.size(); ++i) {
        const auto fu = static_cast<std::size_t>(active[i]);
        rate[fu] = rates[i];
        for (int l : flows[fu].path) {
          if (!in_busy[static_cast<std::size_t>(l)]) {
            in_busy[static_cast<std::size_t>(l)] = 1;
            busy_links.push_back(l);
          }
          link_rate[static_cast<std::size_t>(l)] += rates[i];
        }
      }
      ++res.reallocations;
    }
  }
  if (done != nf) {
    for (std::size_t f = 0; f < nf; ++f)
      if (!std::isfinite(res.finish_ns[f]))
        throw InputError(fmt::format("flows[{}]", f), "never starts: its 'after' dependencies form a cycle");
  }
  return res;
}

}  // namespace chorus::sim::flow
