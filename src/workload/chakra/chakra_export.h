#pragma once
// Export of a training DAG as Chakra execution traces, one file per rank, the input of
// ASTRA-sim 2.x (its Chakra feeder): a GlobalMetadata first, then COMP_NODEs and
// COMM_COLL_NODEs with the attributes Chakra's converters write (comm_type, comm_size,
// involved_dim, num_ops, tensor_size, is_cpu_op) and dependencies as data_deps. What maps to
// what: docs/workloads.md, "Chakra traces". Read back by chakra_import.h.
#include <cstddef>
#include <string>
#include <vector>

#include "net/network.h"
#include "workload/dag.h"

namespace chorus::workload {

// Attributes of chorus's own that ASTRA-sim ignores and the importer reads, so that a
// DAG comes back node for node: the compute kind, the communication group, the layer and
// the iteration (Chakra has no field for them).
inline constexpr const char* kChakraComputeKindAttr = "chorus_compute_kind";  // string: to_string(ComputeKind)
inline constexpr const char* kChakraCommGroupAttr = "chorus_comm_group";      // string: to_string(CommGroup)
inline constexpr const char* kChakraLayerAttr = "chorus_layer";               // int64
inline constexpr const char* kChakraIterationAttr = "chorus_iteration";       // int64

// One rank's trace (the DAG is every NPU's view, so every rank's is the same): node ids = DAG
// indices. Throws InputError (naming the node and the field) for what the format cannot hold:
// point-to-point nodes and pipeline stages (one DAG is every rank's trace, and a transfer's peer
// differs from rank to rank), durations
// that are not whole microseconds, fractional FLOPs or bytes.
// With `rank` >= 0, the trace is that rank's: its point-to-point nodes that name their peer
// (Node::peer, a capture's sends and recvs) become COMM_SEND_NODE / COMM_RECV_NODE with comm_src and
// comm_dst, the peer being rank `peer_offset + peer` (the peer's rank in the rank's copy of a
// replicated capture).
std::string export_chakra(const Dag& dag, const net::Network& network, long long rank = -1, long long peer_offset = 0);

struct ChakraExportFiles {
  std::string first;      // <dir>/<name>.0.et
  std::size_t files = 0;  // one per NPU of the network
  std::size_t bytes = 0;  // of one file
  std::size_t nodes = 0;  // per file
};

// Writes `dir`/`name`.<rank>.et for every rank of the network: rank 0's file, the others hard
// links to it (copies where the file system has no hard links). Existing files are replaced.
ChakraExportFiles write_chakra_traces(const Dag& dag, const net::Network& network, const std::string& dir,
                                      const std::string& name);

// A capture of `by_rank.size()` ranks (each rank's own DAG, with its sends and recvs) replicated to
// the network's NPUs: `dir`/`name`.<R>.et for every rank R = c x W + r of copy c, rank r's DAG with
// its peers in copy c. bytes and nodes are the largest file's.
ChakraExportFiles write_chakra_rank_traces(const std::vector<Dag>& by_rank, const net::Network& network,
                                           const std::string& dir, const std::string& name);

}  // namespace chorus::workload
