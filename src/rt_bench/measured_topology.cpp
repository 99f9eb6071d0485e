// The `host` topology measured on this job (measured_topology.h).
#include "rt_bench/measured_topology.h"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "core/error.h"

namespace chorus::rt {

namespace {

// A bench row as the step model sees it (bench_runner.h gives the sizes' meaning).
std::optional<syndicate::TimedOp> timed_op(const BenchRow& r) {
  syndicate::TimedOp t;
  t.group = r.world_size;
  t.bytes = static_cast<double>(r.bytes);
  t.time_ns = r.out_of_place.mean_us * 1e3;
  switch (r.op) {
    case CollectiveKind::kAllToAllSingle:  // the motif's all-to-all, sized per destination
      t.kind = CollectiveKind::kAllToAll;
      t.bytes /= r.world_size;
      return t;
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
      t.kind = r.op;
      return t;
    default:  // all-to-all's list form and the operations that are no motif: not fitted
      return std::nullopt;
  }
}

}  // namespace

MeasuredTopology measured_topology(const std::vector<BenchRow>& rows, int world, const std::string& machine) {
  std::map<std::string, std::vector<syndicate::TimedOp>> by_backend;
  for (const auto& r : rows)
    if (r.backend.find(':') == std::string::npos)
      if (auto t = timed_op(r)) by_backend[r.backend].push_back(*t);
  syndicate::Topology host = syndicate::builtin_topology("host", world, "topology_out");
  MeasuredTopology m;
  std::vector<std::string> kept;
  for (auto& ch : host.channels) {
    auto it = by_backend.find(ch.backends.front());
    if (it == by_backend.end()) continue;
    const auto fit = syndicate::fit_channel(it->second);
    ch.latency_ns = fit.latency_ns;
    ch.bandwidth_gbps = fit.bandwidth_gbps;
    m.fits.emplace_back(ch.name, fit);
    kept.push_back(ch.backends.front());
  }
  if (kept.empty())
    throw InputError("topology_out", "no measurement of a host channel's backend (shm, mpi, gloo) to fit");
  m.topology = syndicate::with_backends(host, kept, "topology_out");
  m.topology.name = "host-measured";
  m.topology.costs.clear();
  m.machine = machine;
  return m;
}

std::vector<std::string> MeasuredTopology::comment() const {
  std::vector<std::string> out = {
      fmt::format("Topology '{}' of {} ranks on {}: each channel's latency and bandwidth fitted by `chorus tune`",
                  topology.name, topology.npus(), machine),
      "to the times measured on it (the step model of docs/syndicate.md; errors relative to the measured times):"};
  for (const auto& [name, f] : fits)
    out.push_back(fmt::format(
        "  {}: latency {:.3g} us, bandwidth {:.3g} Gb/s; {} measurements, rms error {:.1f} %, max {:.1f} %", name,
        f.latency_ns / 1e3, f.bandwidth_gbps, f.samples, 100 * f.rms_relative_error, 100 * f.max_relative_error));
  return out;
}

}  // namespace chorus::rt
