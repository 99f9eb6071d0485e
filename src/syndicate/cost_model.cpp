// Steps of an execution-plan option and their times (formulas: cost_model.h, docs/syndicate.md).
#include "syndicate/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "core/error.h"

namespace chorus::syndicate {

double step_time_ns(CollectiveKind kind, int group, double bytes, const std::vector<ChannelLoad>& loads) {
  if (group <= 1 || loads.empty()) return 0;
  const double g = group;
  double latency = 0, slowest_byte_ns = 0, bandwidth_ns = 0, all_to_all_ns = 0;
  for (const auto& l : loads) {
    const double byte_ns = 8.0 / l.bandwidth_gbps;  // ns per byte
    latency = std::max(latency, l.latency_ns);
    slowest_byte_ns = std::max(slowest_byte_ns, byte_ns);
    // A ring's bytes per rank, times the share of its hops on this channel (rings rotated so
    // that every rank's channel carries that share, as NCCL's channels do).
    bandwidth_ns = std::max(bandwidth_ns, l.count / g * bytes / g * byte_ns);
    const double incast = 1 + l.incast_penalty * (l.count - 1);  // goodput lost to l.count converging senders
    all_to_all_ns = std::max(all_to_all_ns, l.count * (l.latency_ns + bytes * byte_ns * incast));
  }
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2 * (g - 1) * (latency + bandwidth_ns);
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
      return (g - 1) * (latency + bandwidth_ns);
    case CollectiveKind::kReduce:
    case CollectiveKind::kBroadcast:
      return std::ceil(std::log2(g)) * latency + bytes * slowest_byte_ns;
    case CollectiveKind::kAllToAll:
      return all_to_all_ns;
    default:
      throw std::invalid_argument(fmt::format("step_time_ns: {} is not a motif", to_string(kind)));
  }
}

double step_time_ns(CollectiveKind kind, int group, double bytes, int peers, double bandwidth_gbps, double latency_ns) {
  const bool ring = kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kReduceScatter ||
                    kind == CollectiveKind::kAllGather;
  return step_time_ns(kind, group, bytes, {{ring ? group : peers, bandwidth_gbps, latency_ns}});
}

namespace {

// The op dimensions (indices into op.dims) on which `a` and `b` differ, as a bit mask.
unsigned differing(const CommOp& op, int a, int b) {
  unsigned mask = 0;
  for (std::size_t k = 0; k < op.sizes.size(); ++k) {
    if (a % op.sizes[k] != b % op.sizes[k]) mask |= 1u << k;
    a /= op.sizes[k];
    b /= op.sizes[k];
  }
  return mask;
}

ChannelSet channels_of(const CommOp& op, const Path& path, unsigned dim_mask) {
  ChannelSet set = 0;
  for (std::size_t k = 0; k < op.dims.size(); ++k)
    if (dim_mask & (1u << k)) set |= ChannelSet{1} << path.channels[static_cast<std::size_t>(op.dims[k])];
  return set;
}

const CostEntry& cost_row(const CommOp& op, const PlanOption& o, const Topology& topo) {
  const auto& path = topo.paths.at(static_cast<std::size_t>(o.path)).name;
  for (const auto& row : topo.costs)
    if (row.kind == op.kind && row.algorithm == o.algorithm && row.path == path) return row;
  throw InputError(fmt::format("topology '{}' costs", topo.name),
                   fmt::format("no row for {} {} on {}", to_string(op.kind), o.algorithm, path));
}

bool same_shape(const coll::motif::Motif& a, const coll::motif::Motif& b) {
  return a.kind == b.kind && a.bytes == b.bytes && a.ranks.size() == b.ranks.size() && a.after == b.after;
}

}  // namespace

std::vector<Step> option_steps(const CommOp& op, const PlanOption& o, const Topology& topo) {
  const auto plan = expand(op, o);
  const auto& motifs = plan.motifs;
  const auto seg_size = segment_size(op, o);
  const auto path_of = [&](const coll::motif::Motif& m) -> const Path& {
    return topo.paths.at(static_cast<std::size_t>(o.path_of_segment(static_cast<int>(m.bytes.begin / seg_size))));
  };
  std::vector<Step> steps;
  std::vector<int> step_of(motifs.size(), -1);
  std::vector<char> in_step(static_cast<std::size_t>(op.ranks()), 0);
  std::vector<int> count;  // per channel: a motif's ring hops or one source's destinations on it
  std::vector<ChannelLoad> loads;
  unsigned all_dims = 0;
  for (std::size_t k = 0; k < op.dims.size(); ++k)
    if (op.sizes[k] > 1) all_dims |= 1u << k;

  if (!topo.costs.empty()) {
    // One step per segment: the cost table times whole options, on every channel of the path.
    const CostEntry& row = cost_row(op, o, topo);
    const double seg_bytes = (op.kind == CollectiveKind::kAllToAll ? op.bytes / op.ranks() : op.bytes) / o.segments;
    for (std::size_t i = 0; i < motifs.size(); ++i) {
      const auto seg = motifs[i].bytes.begin;
      if (steps.empty() || motifs[static_cast<std::size_t>(steps.back().first_motif)].bytes.begin != seg) {
        Step s;
        s.kind = op.kind;
        s.group = op.ranks();
        s.bytes = seg_bytes;
        s.channels = channels_of(op, path_of(motifs[i]), all_dims);
        s.first_motif = static_cast<int>(i);
        s.motifs = 0;
        s.segment = static_cast<int>(seg / seg_size);
        s.duration_ns = row.latency_ns + (row.bandwidth_gbps > 0 ? seg_bytes * 8.0 / row.bandwidth_gbps : 0.0);
        steps.push_back(s);
      }
      ++steps.back().motifs;
    }
    return steps;
  }

  for (std::size_t i = 0; i < motifs.size(); ++i) {
    const auto& m = motifs[i];
    bool join = !steps.empty() && same_shape(motifs[static_cast<std::size_t>(steps.back().first_motif)], m);
    if (join)
      for (int r : m.ranks)
        if (in_step[static_cast<std::size_t>(r)]) join = false;
    if (!join) {
      std::fill(in_step.begin(), in_step.end(), 0);
      Step s;
      s.kind = m.kind;
      s.group = static_cast<int>(m.ranks.size());
      s.bytes = static_cast<double>(m.bytes.size());
      s.first_motif = static_cast<int>(i);
      s.motifs = 0;
      s.segment = static_cast<int>(m.bytes.begin / seg_size);
      for (int a : m.after) {
        const int parent = step_of[static_cast<std::size_t>(a)];
        if (std::find(s.after.begin(), s.after.end(), parent) == s.after.end()) s.after.push_back(parent);
      }
      steps.push_back(s);
    }
    Step& s = steps.back();
    const Path& path = path_of(m);
    for (int r : m.ranks) in_step[static_cast<std::size_t>(r)] = 1;
    ++s.motifs;
    step_of[i] = static_cast<int>(steps.size()) - 1;
    // The channels the motif occupies: those of every dimension its ranks differ in. Its bytes
    // are charged to the channel of the highest dimension a hop (ring) or destination
    // (all-to-all) crosses, the slower fabric a scale-out hop leaves by.
    unsigned dims = 0;
    count.assign(topo.channels.size(), 0);
    const auto charge = [&](int a, int b) {
      const unsigned d = differing(op, a, b);
      dims |= d;
      if (d == 0) return;
      const auto top = static_cast<std::size_t>(std::bit_width(d) - 1);
      ++count[static_cast<std::size_t>(path.channels[static_cast<std::size_t>(op.dims[top])])];
    };
    const auto time_of_counts = [&] {
      loads.clear();
      for (std::size_t c = 0; c < count.size(); ++c)
        if (count[c] > 0)
          loads.push_back({count[c], topo.channels[c].bandwidth_gbps, topo.channels[c].latency_ns,
                           topo.channels[c].incast_penalty});
      return step_time_ns(m.kind, s.group, s.bytes, loads);
    };
    const auto g = m.ranks.size();
    if (m.kind == CollectiveKind::kAllToAll) {
      for (std::size_t src = 0; src < g; ++src) {
        std::fill(count.begin(), count.end(), 0);
        for (int d : m.destinations[src]) charge(m.ranks[src], d);
        s.duration_ns = std::max(s.duration_ns, time_of_counts());
      }
    } else if (m.kind == CollectiveKind::kReduce || m.kind == CollectiveKind::kBroadcast) {
      for (int r : m.ranks) charge(m.ranks.front(), r);  // pipelined: every byte crosses the slowest
      s.duration_ns = std::max(s.duration_ns, time_of_counts());
    } else {
      for (std::size_t k = 0; k < g; ++k) charge(m.ranks[k], m.ranks[(k + 1) % g]);  // the ring's hops
      s.duration_ns = std::max(s.duration_ns, time_of_counts());
    }
    s.channels |= channels_of(op, path, dims);
  }
  return steps;
}

std::vector<Step> multipath_steps(const PlanOption& o, const std::vector<Step>& on_path,
                                  const std::vector<Step>& on_alt) {
  if (on_path.size() != on_alt.size())
    throw std::logic_error("multipath_steps: the two paths' options differ in steps");
  std::vector<Step> out = on_path;
  for (std::size_t i = 0; i < out.size(); ++i)
    if (o.path_of_segment(out[i].segment) == o.alt_path) out[i] = on_alt[i];
  return out;
}

double solo_time_ns(const std::vector<Step>& steps) {
  // optSched's rules on one comm-op: at each instant, ready steps in order start unless one of
  // their channels is busy or wanted by an earlier ready step that could not start.
  const std::size_t n = steps.size();
  std::vector<double> end(n, -1.0);
  std::size_t done = 0;
  double now = 0;
  while (done < n) {
    ChannelSet busy = 0, wanted = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (end[i] > now) busy |= steps[i].channels;
    for (std::size_t i = 0; i < n; ++i) {
      if (end[i] >= 0) continue;
      bool ready = true;
      for (int p : steps[i].after)
        ready = ready && end[static_cast<std::size_t>(p)] >= 0 && end[static_cast<std::size_t>(p)] <= now;
      if (!ready) continue;
      if (steps[i].channels & (busy | wanted)) {
        wanted |= steps[i].channels;
        continue;
      }
      end[i] = now + steps[i].duration_ns;
      busy |= steps[i].channels;
      ++done;
    }
    double next = -1;
    for (std::size_t i = 0; i < n; ++i)
      if (end[i] > now && (next < 0 || end[i] < next)) next = end[i];
    if (next < 0) break;  // everything started has ended and nothing else is ready: done
    now = next;
  }
  double makespan = 0;
  for (double e : end) makespan = std::max(makespan, e);
  return makespan;
}

}  // namespace chorus::syndicate
