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
#include "workload/capture/point_to_point.h"
#include "workload/capture/window_collectives.h"
#include "workload/dag.h"

namespace chorus::workload::capture {

struct ImportOptions {
  int iterations = 1;  // the window repeated
  int rank = 0;        // whose DAG
  // The world the capture is scaled to (0: the capture's own ranks): a multiple of the capture's
  // world, whose ranks it is replicated on (scaled_group). InputError naming `world_field` when it
  // is not, and naming the group and the rank when a collective's groups cannot be scaled.
  int world = 0;
  std::string world_field = "world";
  // The sub-groups that grow with the world (their labels, as the capture's ranks' records and the
  // import's note list them: "torch/3"): each becomes, in the larger world, the union of its
  // images in every copy (scaled_group); the others keep their size. InputError naming
  // `grow_field` for a label no rank created, and naming the collective, the group and the rank
  // when some groups of one collective grow and others do not.
  std::vector<std::string> grow_groups;
  std::string grow_field = "grow_groups";
};

// A capture of `captured` ranks replicated to a world of `world` ranks (a multiple of it): copy c
// holds the world's ranks c x captured .. (c + 1) x captured - 1, rank r of the capture being rank
// c x captured + r of the copy. A group G of the capture has the image c x captured + G in copy c.
// A collective on the capture's whole world, or on a group that grows (`grow`), runs on the union
// of its images in every copy, world / captured times its size (a data-parallel group grows with
// the world); one on another sub-group keeps its size and runs, in every copy, on that copy's image
// (the capture's pattern tiled). Returns the group of the ranks of copy `copy`, sorted.
std::vector<int> scaled_group(const std::vector<int>& ranks, int captured, int world, int copy = 0, bool grow = false);

// The dimensions a collective on the capture's group `ranks` spans on `network` when the capture is
// scaled to `world` ranks laid on its NPUs in order: group_dims of its image in copy 0 (of its union
// over the copies when it grows), required to be the same dimensions in every copy (the simulator
// runs one rank's view of a symmetric job).
std::vector<int> scaled_group_dims(const std::vector<int>& ranks, int captured, int world, const net::Network& network,
                                   const std::string& where, bool grow = false);

// A network for a capture on a graph fabric of `npus` servers (the flow-level model: NPU i is
// server i): one dimension, or, when the groups the capture's ranks created have sizes g1 < g2
// < ... in the scaled world (other than 1 and the world; a group in `grow` is npus / world times
// its captured size) each dividing the next and `npus`, the dimensions g1, g2 / g1, ..., npus / gk,
// so that those groups are whole dimensions.
net::Network fabric_logical_network(const Manifest& m, int npus, const std::vector<std::string>& grow = {});

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
// `p2p`, if given, receives the rank's sends and recvs joined alike (join_point_to_point).
std::vector<JoinedCollective> join_rank(const Manifest& m, int rank, const net::Network& network,
                                        std::vector<JoinedPointToPoint>* p2p = nullptr);

// The DAG of `options.rank`; the other ranks checked. `notes` receives the profiler trace's match
// and the groups found.
Dag import_capture(const Manifest& m, const net::Network& network, const ImportOptions& options,
                   std::string* notes = nullptr);

}  // namespace chorus::workload::capture
