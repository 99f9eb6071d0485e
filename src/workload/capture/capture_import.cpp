#include "workload/capture/capture_import.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/text_file.h"
#include "workload/pytorch_eg.h"

namespace chorus::workload::capture {

namespace {

// The kind the simulator runs for a logged operation; none for those it does not simulate.
std::optional<CollectiveKind> simulated(CollectiveKind op) {
  switch (op) {
    case CollectiveKind::kAllReduce:
      return CollectiveKind::kAllReduce;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kAllGatherv:
      return CollectiveKind::kAllGather;
    case CollectiveKind::kReduceScatter:
      return CollectiveKind::kReduceScatter;
    case CollectiveKind::kAllToAll:
    case CollectiveKind::kAllToAllSingle:
    case CollectiveKind::kAllToAllv:
      return CollectiveKind::kAllToAll;
    default:
      return std::nullopt;
  }
}

// The DAG's size of a joined collective (chorus's convention, workload/pytorch_eg.h): the log holds
// what the rank sends: an all-reduce's buffer, an all-gather's input, a reduce-scatter's output
// share, an all-to-all's block to each rank (to itself for the uneven form).
double dag_bytes(const JoinedCollective& c) {
  const double members = static_cast<double>(c.logged.ranks.size());
  return c.op == CollectiveKind::kAllReduce ? c.logged.bytes : c.logged.bytes * members;
}

Dag import_graph(const RankFiles& f, const net::Network& network, const ExecutionGraphOptions& g, std::string* notes) {
  return import_execution_graph(read_text_file(f.graph, "the execution graph"), f.graph, network, g, notes);
}

}  // namespace

std::vector<int> group_dims(const std::vector<int>& ranks, int world, const net::Network& network,
                            const std::string& where) {
  std::set<int> members(ranks.begin(), ranks.end());
  if (members.size() != ranks.size() || ranks.empty() || *members.begin() < 0 || *members.rbegin() >= world)
    throw InputError(where,
                     fmt::format("group [{}]: ranks must be distinct, in 0..{}", fmt::join(ranks, ","), world - 1));
  std::vector<int> dims;
  if (static_cast<int>(members.size()) == world) {
    for (int d = 0; d < network.num_dims(); ++d) dims.push_back(d);
    return dims;
  }
  if (members.size() == 1) return dims;
  if (network.num_npus() != static_cast<std::uint64_t>(world))
    throw InputError(
        where, fmt::format("group [{}] is {} of the capture's {} ranks; placing a sub-group needs a "
                           "network of {} NPUs (this one has {}, {}), or the capture scaled to the network's "
                           "world",
                           fmt::join(ranks, ","), members.size(), world, world, network.num_npus(), network.shape()));
  // Coordinates, dimension 0 fastest.
  auto coords = [&](int npu) {
    std::vector<int> c;
    for (const auto& dim : network.dims) {
      c.push_back(npu % dim.size);
      npu /= dim.size;
    }
    return c;
  };
  const auto first = coords(*members.begin());
  std::uint64_t block = 1;
  for (int r : members) {
    const auto c = coords(r);
    for (int d = 0; d < network.num_dims(); ++d)
      if (c[static_cast<std::size_t>(d)] != first[static_cast<std::size_t>(d)] &&
          std::find(dims.begin(), dims.end(), d) == dims.end())
        dims.push_back(d);
  }
  std::sort(dims.begin(), dims.end());
  for (int d : dims) block *= static_cast<std::uint64_t>(network.dims[static_cast<std::size_t>(d)].size);
  if (block != members.size())
    throw InputError(where, fmt::format("group [{}] is not the NPUs of some dimensions of the network {} around one "
                                        "NPU (its ranks span dimensions {}, {} NPUs); chorus simulates a collective "
                                        "on whole dimensions",
                                        fmt::join(ranks, ","), network.shape(), fmt::join(dims, ","), block));
  return dims;
}

std::vector<int> scaled_group(const std::vector<int>& ranks, int captured, int world, int copy, bool grow) {
  std::vector<int> out;
  if (grow || static_cast<int>(ranks.size()) == captured) {  // the union of the images in every copy
    for (int c = 0; c < world / captured; ++c)
      for (int r : ranks) out.push_back(r + c * captured);
  } else {
    for (int r : ranks) out.push_back(r + copy * captured);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> scaled_group_dims(const std::vector<int>& ranks, int captured, int world, const net::Network& network,
                                   const std::string& where, bool grow) {
  const auto dims = group_dims(scaled_group(ranks, captured, world, 0, grow), world, network, where);
  if (grow || static_cast<int>(ranks.size()) == captured || ranks.size() <= 1) return dims;
  for (int copy = 1; copy < world / captured; ++copy) {
    const auto image = scaled_group(ranks, captured, world, copy);
    if (group_dims(image, world, network, where) != dims)
      throw InputError(where, fmt::format("group [{}] spans dimensions {} of the network {}, but its image [{}] in "
                                          "copy {} of the capture (of {} ranks, scaled to {}) spans others; the "
                                          "simulator runs one rank's view of a job whose groups are alike",
                                          fmt::join(ranks, ","), fmt::join(dims, ","), network.shape(),
                                          fmt::join(image, ","), copy, captured, world));
  }
  return dims;
}

net::Network fabric_logical_network(const Manifest& m, int npus, const std::vector<std::string>& grow) {
  // The sizes g1 < g2 < ... each dividing the next and the servers, the world dividing the servers,
  // a group that keeps its size dividing the world.
  bool chain = m.world > 0 && npus % m.world == 0;
  std::set<int> sizes;
  const int copies = chain ? npus / m.world : 1;
  for (const auto& files : m.ranks)
    for (const auto& g : read_rank_record(files).groups) {
      const int captured = static_cast<int>(g.ranks.size());
      const bool grows = std::find(grow.begin(), grow.end(), g.label) != grow.end();
      // A rank not in a group records it without its label; the members' records name it.
      if (g.label.empty() || captured <= 1 || captured >= m.world || (grows && copies * captured == npus)) continue;
      sizes.insert(captured * (grows ? copies : 1));
      chain = chain && (grows || m.world % captured == 0);
    }
  net::Network logical;
  logical.name = fmt::format("{} servers", npus);
  net::Dimension dim;
  dim.kind = net::DimKind::kRing;
  dim.link_bandwidth_gbps = 100;
  int previous = 1;
  for (int g : sizes) {
    chain = chain && g % previous == 0 && npus % g == 0;
    previous = g;
  }
  int below = 1;
  if (chain)
    for (int g : sizes) {
      dim.size = g / below;
      logical.dims.push_back(dim);
      below = g;
    }
  dim.size = npus / below;
  logical.dims.push_back(dim);
  return logical;
}

std::vector<JoinedCollective> join_rank(const Manifest& m, int rank, const net::Network& network,
                                        std::vector<JoinedPointToPoint>* p2p) {
  const auto& f = m.ranks.at(static_cast<std::size_t>(rank));
  const auto record = read_rank_record(f);
  if (record.first_step != m.first_step || record.last_step != m.last_step)
    throw InputError(f.record, fmt::format("rank {}: field 'window_steps': [{}, {}], the manifest's window is [{}, {}]",
                                           rank, record.first_step, record.last_step, m.first_step, m.last_step));
  std::vector<WindowCollective> logged, logged_p2p;
  for (auto& c : window_collectives(f.comm_log, record, m.world))
    if (simulated(c.op))
      logged.push_back(std::move(c));
    else if (c.op == CollectiveKind::kSend || c.op == CollectiveKind::kRecv)
      logged_p2p.push_back(std::move(c));
  ExecutionGraphOptions plain;
  plain.skip_unsimulated = true;
  plain.point_to_point = true;
  const Dag graph = import_graph(f, network, plain, nullptr);
  auto joined_p2p = join_point_to_point(f, rank, graph, logged_p2p);
  if (p2p) *p2p = std::move(joined_p2p);
  const auto comms =
      window_comm_nodes(f, rank, graph, CommKind::kCollective, logged.size(), "collectives", "collective(s)");
  double all_npus = 1;
  for (const auto& d : network.dims) all_npus *= d.size;
  std::vector<JoinedCollective> out;
  for (std::size_t k = 0; k < comms.size(); ++k) {
    JoinedCollective j;
    j.number = static_cast<int>(k) + 1;
    j.op = comms[k]->op;
    j.logged = logged[k];
    const auto at = fmt::format("{}: rank {}: collective {} ({})", f.graph, rank, j.number, comms[k]->name);
    if (*simulated(j.logged.op) != j.op)
      throw InputError(at, fmt::format("field op: the graph's {} is the log's {} ({}:{})", to_string(j.op),
                                       to_string(j.logged.op), f.comm_log, j.logged.line));
    // The graph's size where its record has tensors (an all-gather's is its input times the network).
    j.graph_bytes = j.op == CollectiveKind::kAllGather ? comms[k]->bytes / all_npus : comms[k]->bytes;
    const double expected = j.op == CollectiveKind::kAllReduce ? j.logged.bytes : dag_bytes(j);
    if (j.graph_bytes > 0 && j.op != CollectiveKind::kAllGather && j.graph_bytes != expected)
      throw InputError(at, fmt::format("field bytes: the graph's {} bytes, the log's {} ({}:{})", j.graph_bytes,
                                       expected, f.comm_log, j.logged.line));
    out.push_back(std::move(j));
  }
  return out;
}

namespace {

// One rank's window DAG (iterations 1): the graph with every collective's group and size from the log.
// "groups: [0,1] (shm) 4, [0] (torch/2) 2": each group the window's collectives ran on, in order of
// first use, with how many.
std::string groups_note(const std::vector<JoinedCollective>& joined) {
  std::vector<std::pair<std::string, int>> seen;
  for (const auto& j : joined) {
    const auto key = fmt::format("[{}] ({})", fmt::join(j.logged.ranks, ","), j.logged.label);
    auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& p) { return p.first == key; });
    if (it == seen.end())
      seen.emplace_back(key, 1);
    else
      ++it->second;
  }
  std::string out = "groups:";
  for (std::size_t k = 0; k < seen.size(); ++k)
    out += fmt::format("{} {} {}", k ? "," : "", seen[k].first, seen[k].second);
  return out;
}

Dag rank_window(const Manifest& m, int world, const std::set<std::string>& grow, int rank, const net::Network& network,
                const std::string& trace, std::string* notes, std::vector<JoinedPointToPoint>& p2p,
                std::string* groups = nullptr) {
  const auto joined = join_rank(m, rank, network, &p2p);
  if (groups) *groups = groups_note(joined);
  ExecutionGraphOptions g;
  g.profiler_trace = trace;
  g.skip_unsimulated = true;
  g.host_gaps = true;
  g.median_of_steps = true;
  g.graph_steps = m.last_step - m.first_step;
  const auto& files = m.ranks[static_cast<std::size_t>(rank)];
  const auto record = read_rank_record(files);
  // The host window's trace (the profiler alone) when the capture has it, with the profiler's
  // cost; else the window's (profiler and graph observer), with theirs.
  if (!trace.empty() && !files.host_trace.empty()) g.profiler_trace = files.host_trace;
  g.overhead_us_per_event = g.profiler_trace == files.host_trace && !files.host_trace.empty()
                                ? record.profiler_us_per_event
                                : record.overhead_us_per_event;
  std::vector<std::vector<int>> dims;
  for (const auto& j : joined) {
    const auto at = fmt::format("{}: rank {}: collective {} (line {})",
                                m.ranks[static_cast<std::size_t>(rank)].comm_log, rank, j.number, j.logged.line);
    dims.push_back(scaled_group_dims(j.logged.ranks, m.world, world, network, at, grow.count(j.logged.label) > 0));
    if (!dims.back().empty()) g.collective_dims[j.number] = dims.back();
  }
  g.point_to_point = true;
  for (const auto& j : p2p)
    g.point_to_point_dims[j.number] = pair_dim(
        rank, j.peer, m.world, world, network,
        fmt::format("{}: rank {}: {} {} to or from rank {} (line {})", m.ranks[static_cast<std::size_t>(rank)].comm_log,
                    rank, j.op == CollectiveKind::kSend ? "send" : "recv", j.number, j.peer, j.logged.line));
  Dag dag = import_graph(m.ranks[static_cast<std::size_t>(rank)], network, g, notes);
  std::size_t k = 0, p = 0;
  for (auto& n : dag.nodes) {
    if (n.kind != NodeKind::kComm) continue;
    if (n.comm == CommKind::kPointToPoint) {  // the log's size; the peer as a rank of the world
      n.bytes = p2p[p].logged.bytes;
      n.peer = p2p[p++].peer;
      continue;
    }
    const auto& j = joined[k];
    if (dims[k].empty()) {  // a group of one: nothing to send
      n.kind = NodeKind::kCompute;
      n.duration_ns = 0;
      n.name += " (group of one)";
    } else {
      n.bytes = dag_bytes(j);
    }
    ++k;
  }
  return dag;
}

// A capture scaled to a larger world: every collective's groups over the capture's ranks must be a
// partition of them into groups of one size (the world, a regular split, or ranks alone), else the
// capture's pattern cannot be tiled, and they must all grow or all keep their size. InputError
// naming the collective, the group and the rank.
void check_scalable(const Manifest& m, const ImportOptions& o, const std::set<std::string>& grow,
                    const net::Network& network) {
  std::vector<std::vector<JoinedCollective>> joined;
  for (int r = 0; r < m.world; ++r) {
    // A rank whose window does not join is reported by the import itself, with its own message.
    try {
      joined.push_back(join_rank(m, r, network));
    } catch (const InputError&) {
      return;
    }
  }
  const auto& mine = joined[static_cast<std::size_t>(o.rank)];
  for (std::size_t k = 0; k < mine.size(); ++k) {
    auto group_of = [&](int r) -> const std::vector<int>* {
      const auto& js = joined[static_cast<std::size_t>(r)];
      return k < js.size() ? &js[k].logged.ranks : nullptr;
    };
    const auto size = mine[k].logged.ranks.size();
    const auto grows = [&](int r) { return grow.count(joined[static_cast<std::size_t>(r)][k].logged.label) > 0; };
    for (int r = 0; r < m.world; ++r) {
      const auto* g = group_of(r);
      if (!g) continue;  // fewer collectives: check_same_communication names it
      std::string why;
      if (grows(r) != grows(o.rank))
        why = fmt::format("rank {}'s group of it, {}, {} ({}), rank {}'s, {}, {}", r,
                          joined[static_cast<std::size_t>(r)][k].logged.label, grows(r) ? "grows" : "does not grow",
                          o.grow_field, o.rank, mine[k].logged.label, grows(o.rank) ? "grows" : "does not");
      else if (g->size() != size)
        why = fmt::format("rank {}'s group of it has {} rank(s), rank {}'s {}", r, g->size(), o.rank, size);
      else if (std::find(g->begin(), g->end(), r) == g->end())
        why = fmt::format("rank {} is not in its own group", r);
      else
        for (int t : *g)
          if (const auto* h = group_of(t);
              h && std::set<int>(h->begin(), h->end()) != std::set<int>(g->begin(), g->end())) {
            why = fmt::format("rank {}'s group of it is [{}]", t, fmt::join(*h, ","));
            break;
          }
      if (!why.empty())
        throw InputError(
            fmt::format("{}: rank {}: collective {} (line {})", m.ranks[static_cast<std::size_t>(r)].comm_log, r, k + 1,
                        joined[static_cast<std::size_t>(r)][k].logged.line),
            fmt::format("group [{}] cannot be scaled to a world of {}: the capture's groups of this collective are "
                        "not a partition of its {} ranks into groups of one size that all grow or all keep their "
                        "size ({}); a larger world tiles the capture's groups, a growing group in every copy's "
                        "ranks",
                        fmt::join(*g, ","), o.world, m.world, why));
    }
  }
}

// The compute of each stretch between consecutive collectives (and before the first, after the
// last), in issue order: the sum of the nodes' measured durations (the roofline's, duration < 0,
// not counted).
std::vector<double> stretches(const Dag& window) {
  std::vector<double> out(1, 0.0);
  for (const auto& n : window.nodes) {
    if (n.kind == NodeKind::kComm)
      out.push_back(0.0);
    else if (n.duration_ns > 0)
      out.back() += n.duration_ns;
  }
  return out;
}

// A collective starts when its last rank issues it, a recv when its peer sends: each stretch of the
// simulated rank's compute between two communication nodes (collectives, sends, recvs) is scaled to
// the slowest rank's time for the same stretch; a stretch of none of its own compute takes it whole
// on its first operator of measured time. Returns the time added (ns).
double slowest_rank_stretches(Dag& window, const std::vector<Dag>& others) {
  const auto own = stretches(window);
  auto slowest = own;
  for (const auto& other : others) {
    const auto theirs = stretches(other);
    for (std::size_t s = 0; s < slowest.size() && s < theirs.size(); ++s) slowest[s] = std::max(slowest[s], theirs[s]);
  }
  double added = 0;
  std::size_t s = 0;
  std::vector<bool> waited(own.size(), false);
  for (auto& n : window.nodes) {
    if (n.kind == NodeKind::kComm) {
      ++s;
      continue;
    }
    if (n.duration_ns > 0 && own[s] > 0) {
      const double scaled = n.duration_ns * slowest[s] / own[s];
      added += scaled - n.duration_ns;
      n.duration_ns = scaled;
    } else if (n.duration_ns >= 0 && own[s] == 0 && slowest[s] > 0 && !waited[s]) {
      // No compute of its own here (a recv waiting for its peer's): its first measured operator
      // (the c10d:: call, of no time) waits for the slowest rank.
      n.duration_ns = slowest[s];
      added += slowest[s];
      waited[s] = true;
    }
  }
  return added;
}

// The labels of options.grow_groups, each required to be a group some rank of the capture created.
std::set<std::string> growing_groups(const Manifest& m, const ImportOptions& o) {
  if (o.grow_groups.empty()) return {};
  std::map<std::string, std::vector<int>> known;  // label -> ranks, from every rank's record
  for (const auto& files : m.ranks)
    for (const auto& g : read_rank_record(files).groups)
      if (!g.label.empty()) known.emplace(g.label, g.ranks);
  std::set<std::string> out;
  for (const auto& label : o.grow_groups) {
    if (!known.count(label)) {
      std::vector<std::string> listed;
      for (const auto& [name, ranks] : known) listed.push_back(fmt::format("{} [{}]", name, fmt::join(ranks, ",")));
      throw InputError(
          o.grow_field,
          fmt::format("group '{}' is not among the groups the capture's ranks created ({}: {}); name "
                      "them as listed (the world's collectives always grow)",
                      label, m.path, listed.empty() ? "none" : fmt::format("{}", fmt::join(listed, ", "))));
    }
    out.insert(label);
  }
  return out;
}

}  // namespace

Dag import_capture(const Manifest& m, const net::Network& network, const ImportOptions& o, std::string* notes) {
  if (o.rank < 0 || o.rank >= m.world)
    throw InputError(m.path, fmt::format("rank {}: the capture has ranks 0..{}", o.rank, m.world - 1));
  if (o.iterations < 1) throw InputError(m.path, fmt::format("iterations must be >= 1, got {}", o.iterations));
  const int world = o.world == 0 ? m.world : o.world;
  if (world < m.world || world % m.world != 0)
    throw InputError(o.world_field,
                     fmt::format("must be a multiple of the capture's {} ranks ({}), got {}", m.world, m.path, world));
  if (o.world != 0 && network.num_npus() != static_cast<std::uint64_t>(world))
    throw InputError(o.world_field,
                     fmt::format("the capture scaled to {} ranks needs a network of {} NPUs, one rank each; {} has {} "
                                 "({})",
                                 world, world, network.name, network.num_npus(), network.shape()));
  const auto grow = growing_groups(m, o);
  if (world != m.world) check_scalable(m, o, grow, network);
  std::string trace_note, groups;
  std::vector<std::vector<JoinedPointToPoint>> p2p(static_cast<std::size_t>(m.world));
  Dag window = rank_window(m, world, grow, o.rank, network, m.ranks[static_cast<std::size_t>(o.rank)].trace,
                           &trace_note, p2p[static_cast<std::size_t>(o.rank)], &groups);
  std::vector<Dag> others;
  for (int r = 0; r < m.world; ++r) {
    if (r == o.rank) continue;
    others.push_back(rank_window(m, world, grow, r, network, m.ranks[static_cast<std::size_t>(r)].trace, nullptr,
                                 p2p[static_cast<std::size_t>(r)]));
  }
  match_point_to_point(m, p2p);  // first: it names an unmatched send or recv and its peer
  for (int r = 0, k = 0; r < m.world; ++r)
    if (r != o.rank)
      check_same_communication(window,
                               fmt::format("{} (rank {})", m.ranks[static_cast<std::size_t>(o.rank)].graph, o.rank),
                               others[static_cast<std::size_t>(k++)],
                               fmt::format("{} (rank {})", m.ranks[static_cast<std::size_t>(r)].graph, r));
  const double waited_ns = slowest_rank_stretches(window, others);
  // Whole microseconds, the trace's resolution (and Chakra's unit, chorus export --chakra).
  for (auto& n : window.nodes)
    if (n.kind == NodeKind::kCompute && n.duration_ns > 0) n.duration_ns = std::round(n.duration_ns / 1e3) * 1e3;
  Dag dag;
  dag.name = std::filesystem::path(m.dir).filename().string();
  repeat_window(dag, window.nodes, o.iterations);
  validate(dag, network.num_dims(), m.path);
  if (notes) {
    int comms = 0;
    for (const auto& n : window.nodes) comms += n.kind == NodeKind::kComm && n.comm == CommKind::kCollective;
    const auto& mine = p2p[static_cast<std::size_t>(o.rank)];
    *notes = fmt::format(
        "capture of {} ranks{}, steps {}..{}, rank {}: {} collective(s){} in the window, their groups "
        "from the communication log ({}); every rank issues the same; {}; the compute between two "
        "communication operations is the slowest rank's ({:.3f} ms added to rank {}'s)",
        m.world,
        world == m.world ? ""
                         : fmt::format(" scaled to {} ({} copies{})", world, world / m.world,
                                       grow.empty() ? "" : fmt::format(", growing {}", fmt::join(grow, ", "))),
        m.first_step, m.last_step - 1, o.rank, comms,
        mine.empty() ? "" : fmt::format(" and {} send(s) / recv(s), each matched to its peer's", mine.size()), groups,
        trace_note, waited_ns / 1e6, o.rank);
  }
  return dag;
}

}  // namespace chorus::workload::capture
