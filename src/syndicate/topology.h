#pragma once
// SYNDICATE's view of a cluster (Sec. 4.2.2, Table 1): NPUs on a grid of dimensions (dim 0: the
// GPUs of a node, dim 1: the nodes), and on each dimension several *channels* (an NVSwitch-like
// scale-up fabric, PCIe, RDMA NICs, TCP/IP over the host network), each with a bandwidth and a
// latency and the backends that can drive it. A *path* is a physical plan: one channel per
// dimension. A motif placed on a path occupies the path's channels of the dimensions its ranks
// span; two motifs may run at once only if they occupy no channel in common.
//
// Optionally a cost table (Fig. 6's "execution plan cost model"): the time of a whole comm-op
// option (kind, algorithm, path), which then replaces the analytical model (cost_model.h).
#include <cstdint>
#include <string>
#include <vector>

#include "core/collective_kind.h"
#include "core/units.h"
#include "workload/compute_model.h"

namespace chorus::syndicate {

struct Channel {
  std::string name;
  int dim = 0;                        // the dimension it connects
  double bandwidth_gbps = 0;          // per NPU, uni-directional
  double latency_ns = 0;              // per message (alpha)
  std::vector<std::string> backends;  // who can use it (nccl, mpi, gloo, shm, ...): for the runtime
  // Incast (Sec. 6.6, Fig. 17): a NIC receiving from m senders at once delivers
  // 1 / (1 + incast_penalty (m - 1)) of its bandwidth to an all-to-all (0: no loss).
  double incast_penalty = 0;
};

struct Path {
  std::string name;
  std::vector<int> channels;  // index into Topology::channels, one per dimension (dim order)
};

// One row of a cost table: the time of a comm-op `kind` (all_reduce, all_to_all, ...) run with
// `algorithm` on `path`, as latency + bytes / bandwidth (bandwidth 0: a constant).
struct CostEntry {
  CollectiveKind kind = CollectiveKind::kAllReduce;  // a comm-op: all_reduce, all_to_all or broadcast
  std::string algorithm;
  std::string path;
  double latency_ns = 0;
  double bandwidth_gbps = 0;
};

struct Topology {
  std::string name;
  std::vector<int> dims;  // NPUs per dimension, dim 0 first (fastest varying rank)
  std::vector<std::string> dim_names;
  std::vector<Channel> channels;  // at most 32 (a motif's channels are a bit set)
  std::vector<Path> paths;
  std::vector<CostEntry> costs;    // empty: the analytical model
  workload::ComputeModel compute;  // for DAG compute nodes without a fixed duration

  int npus() const;
  int channel_index(const std::string& name) const;  // -1 when absent
  int path_index(const std::string& name) const;
};

using ChannelSet = std::uint32_t;

// Checks sizes, names (unique), that every path has one channel per dimension on that
// dimension, and cost rows naming known paths. Throws InputError prefixed by `where`.
void validate(const Topology& t, const std::string& where);

// Built-in topologies: "syndicate-fig6" (the example of Fig. 6: 2 nodes of 2, a cost table),
// "syndicate-testbed" (Table 1: 16 nodes of 8 V100, NVSwitch, 8x100 Gb/s RoCE, 2x100 Gb/s host
// network, PCIe) and "host" (this machine: `ranks` processes, channels shm, gloo over loopback
// and mpi). docs/syndicate.md gives every value and its source.
const std::vector<std::string>& topology_names();
Topology builtin_topology(const std::string& name, int ranks, const std::string& field);

// `t` without the channels whose first backend is not in `backends` (and the paths using them);
// InputError naming `field` if no path is left.
Topology with_backends(const Topology& t, const std::vector<std::string>& backends, const std::string& field);

// A built-in name, or a YAML file (topology_yaml.h). `ranks` sizes "host" (default 4).
Topology load_topology(const std::string& name_or_path, int ranks, const std::string& field);

}  // namespace chorus::syndicate
