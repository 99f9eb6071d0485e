#pragma once
// Import of a `chorus capture` directory (docs/capture.md): per rank, the execution graph gives the
// DAG (workload/pytorch_eg.h), the torch profiler trace the compute operators' measured durations,
// and the communication log each collective's group and size: the graph's collectives (the chorus
// backend's records) and the log's operations inside the window are joined in issue order, op by
// op, and a collective spans the network dimensions its group's ranks occupy (group_dims). Every
// rank is imported and checked to issue the same collectives as the simulated one.
#include <string>
#include <vector>

#include "net/network.h"
#include "workload/capture/capture_manifest.h"
#include "workload/capture/window_collectives.h"
#include "workload/dag.h"

namespace chorus::workload::capture {

struct ImportOptions {
  int iterations = 1;  // the window repeated
  int rank = 0;        // whose DAG
};

// The dimensions a group of world ranks spans on `network` when the capture's `world` ranks are
// laid on its NPUs in order (NPU id = coordinates in mixed radix, dimension 0 fastest): the whole
// world spans every dimension (on any network: the job scaled to it); another group must be the
// NPUs of some dimensions around one NPU, which needs a network of `world` NPUs; a group of one
// spans none. InputError naming `where` otherwise.
std::vector<int> group_dims(const std::vector<int>& ranks, int world, const net::Network& network,
                            const std::string& where);

// One rank's window joined: the graph's collectives, each with the log's operation it is. InputError
// naming the rank, the collective's number (from 1, in issue order) and the field (count, op, bytes).
struct JoinedCollective {
  int number = 0;                                  // from 1
  CollectiveKind op = CollectiveKind::kAllReduce;  // the simulated kind
  double graph_bytes = 0;                          // the graph record's tensors (0 if it records none)
  WindowCollective logged;
};
std::vector<JoinedCollective> join_rank(const Manifest& m, int rank, const net::Network& network);

// The DAG of `options.rank`; the other ranks checked. `notes` receives the profiler trace's match
// and the groups found.
Dag import_capture(const Manifest& m, const net::Network& network, const ImportOptions& options,
                   std::string* notes = nullptr);

}  // namespace chorus::workload::capture
