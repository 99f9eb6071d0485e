#pragma once
// Point-to-point operations (send / recv, blocking or not) inside a capture's window
// (docs/capture.md, "Point-to-point"): each rank's sends and recvs of the execution graph joined to
// the communication log's in issue order, their peers (the graph's c10d:: operator's argument, a
// rank of its process group) as world ranks, matched between ranks, and the network dimension
// that joins a rank and its peer.
#include <string>
#include <vector>

#include "net/network.h"
#include "workload/capture/capture_manifest.h"
#include "workload/capture/window_collectives.h"
#include "workload/dag.h"

namespace chorus::workload::capture {

struct JoinedPointToPoint {
  int number = 0;                             // from 1, the rank's sends and recvs in issue order
  CollectiveKind op = CollectiveKind::kSend;  // kSend or kRecv
  int peer = 0;                               // the other rank, in the capture's world
  WindowCollective logged;                    // the log's operation (its bytes, group and line)
};

// The communication nodes of `kind` in the window's `graph`, in order, which must be as many as
// the log's operations of that kind in the window (`logged`): InputError naming the graph, the
// rank and `field` otherwise ("the graph's window has N <what>, the communication log L has M").
std::vector<const Node*> window_comm_nodes(const RankFiles& files, int rank, const Dag& graph, CommKind kind,
                                           std::size_t logged, const char* field, const char* what);

// The point-to-point nodes of `graph` (imported with ExecutionGraphOptions::point_to_point) joined
// to the log's sends and recvs of the window (`logged`, in issue order). InputError naming the
// graph or the log, the rank, the operation's number and the field: their counts, kinds, sizes,
// a peer the graph does not record or outside the group.
std::vector<JoinedPointToPoint> join_point_to_point(const RankFiles& files, int rank, const Dag& graph,
                                                    const std::vector<WindowCollective>& logged);

// Every send matched to its recv: the k-th send of rank a to rank b is the k-th recv of b from a,
// of the same size (`ranks[r]`: rank r's, in issue order). InputError naming the rank's log, the
// rank, the operation (send / recv and its number), the peer and what the peer did instead.
void match_point_to_point(const Manifest& m, const std::vector<std::vector<JoinedPointToPoint>>& ranks);

// The network dimension a transfer between the capture's ranks `rank` and `peer` takes when the
// capture's ranks are laid on the network's NPUs in order (dimension 0 fastest), in every copy of
// a capture of `captured` ranks scaled to `world` (copy c: ranks c x captured + rank and
// c x captured + peer): the one dimension in which their NPUs differ, the same in every copy.
// InputError naming `where` otherwise.
int pair_dim(int rank, int peer, int captured, int world, const net::Network& network, const std::string& where);

}  // namespace chorus::workload::capture
