// SYNDICATE topologies: checks and the built-in presets (values and sources: docs/syndicate.md).
#include "syndicate/topology.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "core/suggest.h"
#include "syndicate/topology_yaml.h"

namespace chorus::syndicate {

int Topology::npus() const {
  int n = 1;
  for (int d : dims) n *= d;
  return n;
}

int Topology::channel_index(const std::string& n) const {
  for (std::size_t i = 0; i < channels.size(); ++i)
    if (channels[i].name == n) return static_cast<int>(i);
  return -1;
}

int Topology::path_index(const std::string& n) const {
  for (std::size_t i = 0; i < paths.size(); ++i)
    if (paths[i].name == n) return static_cast<int>(i);
  return -1;
}

void validate(const Topology& t, const std::string& where) {
  if (t.dims.empty()) throw InputError(where, "dims: at least one dimension is needed");
  long long npus = 1;
  for (std::size_t d = 0; d < t.dims.size(); ++d) {
    if (t.dims[d] < 1) throw InputError(where, fmt::format("dims[{}]: size must be >= 1, got {}", d, t.dims[d]));
    npus *= t.dims[d];
    if (npus > (1 << 20)) throw InputError(where, "dims: more than 2^20 NPUs");
  }
  if (t.channels.empty()) throw InputError(where, "channels: at least one channel is needed");
  if (t.channels.size() > 32) throw InputError(where, fmt::format("channels: at most 32, got {}", t.channels.size()));
  std::set<std::string> names;
  for (std::size_t i = 0; i < t.channels.size(); ++i) {
    const auto& c = t.channels[i];
    const auto at = fmt::format("channels[{}] ({})", i, c.name);
    if (c.name.empty()) throw InputError(where, fmt::format("channels[{}]: name is empty", i));
    if (!names.insert(c.name).second) throw InputError(where, at + ": duplicate channel name");
    if (c.dim < 0 || c.dim >= static_cast<int>(t.dims.size()))
      throw InputError(where, fmt::format("{}: dim {} is not a dimension (0..{})", at, c.dim, t.dims.size() - 1));
    if (!(c.bandwidth_gbps > 0) || !std::isfinite(c.bandwidth_gbps))
      throw InputError(where, fmt::format("{}: bandwidth_gbps must be > 0, got {}", at, c.bandwidth_gbps));
    if (!(c.latency_ns >= 0) || !std::isfinite(c.latency_ns))
      throw InputError(where, fmt::format("{}: latency_ns must be >= 0, got {}", at, c.latency_ns));
    if (!(c.incast_penalty >= 0) || !std::isfinite(c.incast_penalty))
      throw InputError(where, fmt::format("{}: incast_penalty must be >= 0, got {}", at, c.incast_penalty));
  }
  if (t.paths.empty()) throw InputError(where, "paths: at least one path is needed");
  std::set<std::string> path_names;
  for (std::size_t i = 0; i < t.paths.size(); ++i) {
    const auto& p = t.paths[i];
    const auto at = fmt::format("paths[{}] ({})", i, p.name);
    if (p.name.empty()) throw InputError(where, fmt::format("paths[{}]: name is empty", i));
    if (!path_names.insert(p.name).second) throw InputError(where, at + ": duplicate path name");
    if (p.channels.size() != t.dims.size())
      throw InputError(
          where, fmt::format("{}: needs one channel per dimension ({}), got {}", at, t.dims.size(), p.channels.size()));
    for (std::size_t d = 0; d < p.channels.size(); ++d) {
      const int c = p.channels[d];
      if (c < 0 || c >= static_cast<int>(t.channels.size()))
        throw InputError(where, fmt::format("{}: channel {} does not exist", at, c));
      if (t.channels[c].dim != static_cast<int>(d))
        throw InputError(where, fmt::format("{}: channel '{}' is on dim {}, listed for dim {}", at, t.channels[c].name,
                                            t.channels[c].dim, d));
    }
  }
  for (std::size_t i = 0; i < t.costs.size(); ++i) {
    const auto& e = t.costs[i];
    const auto at = fmt::format("costs[{}]", i);
    if (t.path_index(e.path) < 0)
      throw InputError(where, fmt::format("{}: path '{}' is not a path{}", at, e.path, did_you_mean(e.path, [&] {
                                            std::vector<std::string> v;
                                            for (const auto& p : t.paths) v.push_back(p.name);
                                            return v;
                                          }())));
    if (e.algorithm.empty()) throw InputError(where, at + ": algorithm is empty");
    if (!(e.latency_ns >= 0) || !std::isfinite(e.latency_ns))
      throw InputError(where, fmt::format("{}: latency_ns must be >= 0, got {}", at, e.latency_ns));
    if (!(e.bandwidth_gbps >= 0) || !std::isfinite(e.bandwidth_gbps))
      throw InputError(where,
                       fmt::format("{}: bandwidth_gbps must be >= 0 (0: constant), got {}", at, e.bandwidth_gbps));
  }
  if (!(t.compute.peak_tflops > 0) || !(t.compute.memory_bandwidth_gbs > 0))
    throw InputError(where, "compute: peak_tflops and memory_bandwidth_gbs must be > 0");
}

namespace {

Path make_path(const Topology& t, std::string name, const std::vector<std::string>& channels) {
  Path p{std::move(name), {}};
  for (const auto& c : channels) p.channels.push_back(t.channel_index(c));
  return p;
}

// Fig. 6: the example's numbers are its cost table, in time units of 1 ms.
Topology fig6() {
  Topology t;
  t.name = "syndicate-fig6";
  t.dims = {2, 2};
  t.dim_names = {"node", "cluster"};
  t.channels = {{"nvlink", 0, 1200, 0, {"nccl"}},
                {"pcie", 0, 100, 0, {"ucx"}},
                {"rdma", 1, 100, 0, {"nccl"}},
                {"tcp", 1, 25, 0, {"ucx"}}};
  t.paths = {make_path(t, "nvlink+rdma", {"nvlink", "rdma"}), make_path(t, "pcie+tcp", {"pcie", "tcp"})};
  t.costs = {{CollectiveKind::kAllToAll, "pairwise", "nvlink+rdma", 2.5e6, 0},
             {CollectiveKind::kAllToAll, "pairwise", "pcie+tcp", 3.5e6, 0},
             {CollectiveKind::kAllReduce, "ring", "nvlink+rdma", 2.5e6, 0},
             {CollectiveKind::kAllReduce, "tree", "nvlink+rdma", 3.0e6, 0}};
  return t;
}

// Table 1: per node 8 V100, NVSwitch 1.2 TB/s, 8 x 100 Gb/s RoCE (one NIC per GPU), 2 x 100 Gb/s
// host network; 120 TFLOPS FP32 / 1000 TFLOPS FP16 and 7.2 TB/s HBM per node. Per GPU: 1200 Gb/s
// scale-up, 100 Gb/s RDMA, 25 Gb/s TCP, 900 GB/s. PCIe and the latencies are not in the paper:
// PCIe 3.0 x16 (~12.5 GB/s effective), latencies typical of each fabric.
// Two values are fitted, the paper giving neither (docs/syndicate.md, "Calibration"): compute
// at 30 TFLOPS per GPU (mixed precision, a quarter of the tensor cores' 125) and an incast
// penalty of 0.005 on the NICs (a 128-GPU all-to-all's 120 converging senders get 63 % of the
// bandwidth; Sec. 6.6 names incast, not its size). Together they give A2 the compute idling of
// Fig. 14: SYNDICATE 27.7 % (paper 27.4 %), BS+ 45.2 % (~45 %).
Topology testbed() {
  Topology t;
  t.name = "syndicate-testbed";
  t.dims = {8, 16};
  t.dim_names = {"node", "cluster"};
  t.channels = {{"nvswitch", 0, 1200, 2000, {"nccl"}},
                {"pcie", 0, 100, 2000, {"ucx", "mpi"}},
                {"rdma", 1, 100, 5000, {"nccl", "ucx"}, 0.005},
                {"tcp", 1, 25, 20000, {"ucx", "gloo", "mpi"}, 0.005}};
  t.paths = {make_path(t, "nvswitch+rdma", {"nvswitch", "rdma"}), make_path(t, "pcie+tcp", {"pcie", "tcp"}),
             make_path(t, "nvswitch+tcp", {"nvswitch", "tcp"}), make_path(t, "pcie+rdma", {"pcie", "rdma"})};
  t.compute = {30.0, 900.0};
  return t;
}

// This machine: `ranks` processes, one dimension, the runtime's three backends as channels. Bus
// bandwidths and small-message latencies of BENCHMARKS-history.md (4 ranks on the CI machine: shm 45,
// Open MPI 19, Gloo 7.5 Gb/s at 16 MiB; 8 B: ~2, ~5, ~250 us). A 2-core host runs them on the
// same cores, so their overlap is optimistic there (docs/syndicate.md).
Topology host(int ranks) {
  Topology t;
  t.name = "host";
  t.dims = {ranks};
  t.dim_names = {"host"};
  t.channels = {{"shm", 0, 45, 2000, {"shm"}}, {"mpi", 0, 19, 5000, {"mpi"}}, {"gloo", 0, 7.5, 250000, {"gloo"}}};
  t.paths = {make_path(t, "shm", {"shm"}), make_path(t, "mpi", {"mpi"}), make_path(t, "gloo", {"gloo"})};
  t.compute = {0.05, 10.0};  // one core: ~50 GFLOP/s, ~10 GB/s
  return t;
}

}  // namespace

const std::vector<std::string>& topology_names() {
  static const std::vector<std::string> names = {"syndicate-fig6", "syndicate-testbed", "host"};
  return names;
}

Topology builtin_topology(const std::string& name, int ranks, const std::string& field) {
  Topology t;
  if (name == "syndicate-fig6") {
    t = fig6();
  } else if (name == "syndicate-testbed") {
    t = testbed();
  } else if (name == "host") {
    if (ranks < 2 || ranks > 64) throw InputError("ranks", fmt::format("host: ranks must be 2..64, got {}", ranks));
    t = host(ranks);
  } else {
    throw InputError(
        field,
        fmt::format("unknown topology '{}'{} (built in: syndicate-fig6, syndicate-testbed, host; or a YAML file)", name,
                    did_you_mean(name, topology_names())));
  }
  validate(t, name);
  return t;
}

Topology with_backends(const Topology& t, const std::vector<std::string>& backends, const std::string& field) {
  Topology out = t;
  out.channels.clear();
  out.paths.clear();
  std::vector<int> renumber(t.channels.size(), -1);
  for (std::size_t c = 0; c < t.channels.size(); ++c) {
    const auto& ch = t.channels[c];
    if (ch.backends.empty() || std::find(backends.begin(), backends.end(), ch.backends.front()) == backends.end())
      continue;
    renumber[c] = static_cast<int>(out.channels.size());
    out.channels.push_back(ch);
  }
  for (const auto& p : t.paths) {
    Path q{p.name, {}};
    for (int c : p.channels) q.channels.push_back(renumber[static_cast<std::size_t>(c)]);
    if (std::find(q.channels.begin(), q.channels.end(), -1) == q.channels.end()) out.paths.push_back(q);
  }
  std::erase_if(out.costs, [&](const CostEntry& e) { return out.path_index(e.path) < 0; });
  if (out.paths.empty())
    throw InputError(field, fmt::format("topology '{}' has no path whose channels all use a backend of this job ({})",
                                        t.name, fmt::join(backends, ", ")));
  validate(out, t.name);
  return out;
}

Topology load_topology(const std::string& name_or_path, int ranks, const std::string& field) {
  for (const auto& n : topology_names())
    if (n == name_or_path) return builtin_topology(n, ranks, field);
  if (std::filesystem::exists(name_or_path)) return read_topology_yaml(name_or_path);
  return builtin_topology(name_or_path, ranks, field);  // throws: unknown name, with a suggestion
}

}  // namespace chorus::syndicate
