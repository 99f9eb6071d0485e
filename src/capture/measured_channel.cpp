#include "capture/measured_channel.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "capture/host_network.h"
#include "core/error.h"
#include "workload/capture/window_collectives.h"

namespace chorus::capture {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

MeasuredChannel fit_channel(const std::vector<LoggedAllReduce>& ops, int ranks) {
  MeasuredChannel c;
  if (ranks < 2) return c;
  const double steps = 2 * std::ceil(std::log2(static_cast<double>(ranks)));
  const double share = 2.0 * (ranks - 1) / ranks;   // of the buffer, sent per rank
  std::vector<std::pair<double, double>> measured;  // bytes, d (ns)
  for (const auto& op : ops) {
    if (op.start_ns.empty() || op.start_ns.size() != op.end_ns.size()) continue;
    const auto last_start = *std::max_element(op.start_ns.begin(), op.start_ns.end());
    const auto first_end = *std::min_element(op.end_ns.begin(), op.end_ns.end());
    if (first_end > last_start) measured.emplace_back(op.bytes, static_cast<double>(first_end - last_start));
  }
  std::vector<double> small, large;
  for (const auto& [bytes, d] : measured)
    if (bytes <= kSmallBytes) small.push_back(d / steps);
  if (!small.empty()) {
    c.latency_ns = median_of(small);
    c.latency_from = static_cast<int>(small.size());
  }
  for (const auto& [bytes, d] : measured)
    if (bytes >= kLargeBytes && d > steps * c.latency_ns)
      large.push_back(share * bytes * 8 / (d - steps * c.latency_ns));  // bits per ns = Gb/s
  if (!large.empty()) {
    c.bandwidth_gbps = median_of(large);
    c.bandwidth_from = static_cast<int>(large.size());
  }
  return c;
}

MeasuredChannel measured_channel(const workload::capture::Manifest& m) {
  namespace wc = workload::capture;
  std::vector<std::vector<wc::WindowCollective>> logs;
  for (const auto& f : m.ranks) logs.push_back(wc::window_collectives(f.comm_log, wc::read_rank_record(f), m.world));
  std::size_t n = logs.empty() ? 0 : logs.front().size();
  for (const auto& l : logs) n = std::min(n, l.size());
  std::vector<LoggedAllReduce> ops;
  for (std::size_t k = 0; k < n; ++k) {
    const auto& first = logs.front()[k];
    if (first.op != CollectiveKind::kAllReduce || first.ranks.size() != static_cast<std::size_t>(m.world)) continue;
    LoggedAllReduce op;
    op.bytes = first.bytes;
    bool same = true;
    for (const auto& l : logs) {
      same = same && l[k].op == first.op && l[k].bytes == first.bytes && l[k].end_ns > 0;
      op.start_ns.push_back(l[k].start_ns);
      op.end_ns.push_back(l[k].end_ns);
    }
    if (same) ops.push_back(std::move(op));
  }
  return fit_channel(ops, m.world);
}

net::Network capture_host_network(const workload::capture::Manifest& m, int ranks, const std::string& field,
                                  unsigned cpus) {
  auto n = host_network(ranks, m.backend, field);
  MeasuredChannel c;
  try {
    if (cpus > 0 && static_cast<unsigned>(m.world) <= cpus) c = measured_channel(m);
  } catch (const InputError&) {
    // A log or record that cannot be read: the import that follows names it in its own words.
  }
  auto& d = n.dims.front();
  std::vector<std::string> what;
  if (c.latency_from > 0) {
    d.latency_ns = c.latency_ns;
    what.push_back(fmt::format("latency {:.1f} us from {} all-reduce(s)", c.latency_ns / 1e3, c.latency_from));
  }
  if (c.bandwidth_from > 0) {
    d.link_bandwidth_gbps = c.bandwidth_gbps;
    what.push_back(fmt::format("{:.1f} Gb/s from {}", c.bandwidth_gbps, c.bandwidth_from));
  }
  if (!what.empty())
    n.name = fmt::format("host ({}, {} ranks; measured by the capture: {})", m.backend, ranks, fmt::join(what, ", "));
  return n;
}

}  // namespace chorus::capture
