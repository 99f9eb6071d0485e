#include "workload/capture/point_to_point.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace chorus::workload::capture {

namespace {

const char* verb(CollectiveKind op) { return op == CollectiveKind::kSend ? "send" : "recv"; }

// NPU `npu`'s coordinates on `network`, dimension 0 fastest.
std::vector<int> coordinates(const net::Network& network, long long npu) {
  std::vector<int> c;
  for (const auto& dim : network.dims) {
    c.push_back(static_cast<int>(npu % dim.size));
    npu /= dim.size;
  }
  return c;
}

}  // namespace

std::vector<const Node*> window_comm_nodes(const RankFiles& files, int rank, const Dag& graph, CommKind kind,
                                           std::size_t logged, const char* field, const char* what) {
  std::vector<const Node*> nodes;
  for (const auto& n : graph.nodes)
    if (n.kind == NodeKind::kComm && n.comm == kind) nodes.push_back(&n);
  if (nodes.size() != logged)
    throw InputError(files.graph, fmt::format("rank {}: field {}: the graph's window has {} {}, the communication log "
                                              "{} has {} in the window",
                                              rank, field, nodes.size(), what, files.comm_log, logged));
  return nodes;
}

std::vector<JoinedPointToPoint> join_point_to_point(const RankFiles& files, int rank, const Dag& graph,
                                                    const std::vector<WindowCollective>& logged) {
  const auto nodes = window_comm_nodes(files, rank, graph, CommKind::kPointToPoint, logged.size(), "point_to_point",
                                       "send(s) and recv(s)");
  std::vector<JoinedPointToPoint> out;
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const Node& n = *nodes[k];
    JoinedPointToPoint j;
    j.number = static_cast<int>(k) + 1;
    j.op = n.op;
    j.logged = logged[k];
    const auto at = fmt::format("{}: rank {}: {} {} ({})", files.graph, rank, verb(n.op), j.number, n.name);
    if (j.logged.op != n.op)
      throw InputError(at, fmt::format("field op: the graph's {} is the log's {} ({}:{})", verb(n.op),
                                       to_string(j.logged.op), files.comm_log, j.logged.line));
    if (n.bytes > 0 && n.bytes != j.logged.bytes)
      throw InputError(at, fmt::format("field bytes: the graph's {} bytes, the log's {} ({}:{})", n.bytes,
                                       j.logged.bytes, files.comm_log, j.logged.line));
    // The graph records the peer as a rank of the operation's process group.
    const auto& group = j.logged.ranks;
    if (n.peer < 0 || n.peer >= static_cast<int>(group.size()))
      throw InputError(at, fmt::format("field peer: {} is no rank of its group [{}] ({}); the graph's c10d:: "
                                       "operator records the peer as its third argument",
                                       n.peer, fmt::join(group, ","), j.logged.label));
    j.peer = group[static_cast<std::size_t>(n.peer)];
    if (j.peer == rank) throw InputError(at, fmt::format("field peer: rank {} {}s to itself", rank, verb(n.op)));
    out.push_back(std::move(j));
  }
  return out;
}

void match_point_to_point(const Manifest& m, const std::vector<std::vector<JoinedPointToPoint>>& ranks) {
  // Per ordered pair (from, to): the sends of `from` to `to` and the recvs of `to` from `from`, in order.
  std::map<std::pair<int, int>, std::vector<const JoinedPointToPoint*>> sends, recvs;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r)
    for (const auto& j : ranks[static_cast<std::size_t>(r)]) {
      if (j.op == CollectiveKind::kSend)
        sends[{r, j.peer}].push_back(&j);
      else
        recvs[{j.peer, r}].push_back(&j);
    }
  auto where = [&](int r, const JoinedPointToPoint& j) {
    return fmt::format("{}: rank {}: {} {} (line {})", m.ranks[static_cast<std::size_t>(r)].comm_log, r, verb(j.op),
                       j.number, j.logged.line);
  };
  for (const auto& [pair, list] : sends) {
    const auto& got = recvs[pair];
    for (std::size_t k = 0; k < list.size(); ++k) {
      const auto& s = *list[k];
      if (k >= got.size())
        throw InputError(where(pair.first, s),
                         fmt::format("its message {} to rank {} ({} bytes) has no recv: rank {} receives {} "
                                     "message(s) from rank {} in the window",
                                     k + 1, pair.second, s.logged.bytes, pair.second, got.size(), pair.first));
      if (got[k]->logged.bytes != s.logged.bytes)
        throw InputError(where(pair.first, s),
                         fmt::format("its message {} to rank {} is {} bytes, but rank {}'s recv {} of it ({}) is {} "
                                     "bytes",
                                     k + 1, pair.second, s.logged.bytes, pair.second, got[k]->number,
                                     where(pair.second, *got[k]), got[k]->logged.bytes));
    }
  }
  for (const auto& [pair, list] : recvs) {
    const auto it = sends.find(pair);
    const std::size_t sent = it == sends.end() ? 0 : it->second.size();
    if (list.size() > sent)
      throw InputError(where(pair.second, *list[sent]),
                       fmt::format("its message {} from rank {} ({} bytes) is never sent: rank {} sends {} "
                                   "message(s) to rank {} in the window",
                                   sent + 1, pair.first, list[sent]->logged.bytes, pair.first, sent, pair.second));
  }
}

int pair_dim(int rank, int peer, int captured, int world, const net::Network& network, const std::string& where) {
  int dim = -1;
  for (int copy = 0; copy < world / captured; ++copy) {
    const long long a = static_cast<long long>(copy) * captured + rank,
                    b = static_cast<long long>(copy) * captured + peer;
    if (static_cast<std::uint64_t>(std::max(a, b)) >= network.num_npus())
      throw InputError(where, fmt::format("ranks {} and {} need a network of {} NPUs or more; {} has {}", a, b,
                                          std::max(a, b) + 1, network.name, network.num_npus()));
    const auto x = coordinates(network, a), y = coordinates(network, b);
    std::vector<int> differ;
    for (int d = 0; d < network.num_dims(); ++d)
      if (x[static_cast<std::size_t>(d)] != y[static_cast<std::size_t>(d)]) differ.push_back(d);
    if (differ.size() != 1)
      throw InputError(where, fmt::format("ranks {} and {} differ in dimensions {} of the network {}; chorus "
                                          "simulates a point-to-point transfer on one dimension",
                                          a, b, fmt::join(differ, ","), network.shape()));
    if (dim >= 0 && differ[0] != dim)
      throw InputError(where, fmt::format("ranks {} and {} (copy {}) differ in dimension {}, copy 0's pair in {}; "
                                          "the simulator runs one rank's view of a job whose copies are alike",
                                          a, b, copy, differ[0], dim));
    dim = differ[0];
  }
  return dim;
}

}  // namespace chorus::workload::capture
