#include "sim/flow_network.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "sim/flow/traffic.h"

namespace chorus::sim {

SharedFlows::SharedFlows(const net::GraphNetwork& fabric, double batch_tolerance)
    : fabric_(net::merge_parallel_links(fabric)), router_(fabric_), engine_(fabric_, batch_tolerance) {
  net::validate(fabric_, fabric.name);
}

void SharedFlows::set_capacities_at(double at_ns, const std::vector<double>& gbps) {
  engine_.advance_to(at_ns);
  std::vector<bool> usable(gbps.size());
  for (std::size_t l = 0; l < gbps.size(); ++l) usable[l] = gbps[l] > 0;
  detour_.reset();
  if (std::find(usable.begin(), usable.end(), false) != usable.end()) {
    auto detour = std::make_unique<net::Router>(fabric_, usable);
    if (detour->connects_servers()) detour_ = std::move(detour);
  }
  if (detour_) {
    // Every flow not yet sent whose path crosses a link that is down takes the route around it.
    std::vector<std::pair<int, net::Path>> moves;
    const auto& flows = engine_.flows();
    const auto& sent = engine_.result().send_done_ns;
    for (std::size_t f = 0; f < flows.size() && f < sent.size(); ++f) {
      const auto& flow = flows[f];
      if (std::isfinite(sent[f]) || flow.src < 0 || flow.dst < 0 || flow.src == flow.dst) continue;
      if (std::none_of(flow.path.begin(), flow.path.end(), [&](int l) { return !usable[static_cast<std::size_t>(l)]; }))
        continue;
      moves.emplace_back(static_cast<int>(f), detour_->shortest_path(flow.src, flow.dst));
    }
    engine_.reroute(moves);
  }
  engine_.set_capacities(gbps);
}

FlowNetwork::FlowNetwork(SharedFlows& shared, const net::Network& logical, std::vector<int> servers,
                         const std::string& where)
    : shared_(shared), fabric_(shared.fabric_), logical_(logical), engine_(shared.engine_) {
  if (servers.size() != logical.num_npus())
    throw InputError(where, fmt::format("{} servers for {} NPUs", servers.size(), logical.num_npus()));
  std::vector<char> used(static_cast<std::size_t>(fabric_.servers), 0);
  for (int s : servers) {
    if (s < 0 || s >= fabric_.servers)
      throw InputError(where, fmt::format("server {} out of range 0..{}", s, fabric_.servers - 1));
    if (used[static_cast<std::size_t>(s)]++) throw InputError(where, fmt::format("server {} given twice", s));
  }
  options_.placement = std::move(servers);
  index_rings();
}

void FlowNetwork::index_rings() {
  for (const auto& g : fabric_.rings)
    if (!g.orders.empty()) rings_[g.servers] = g.orders;
}

FlowNetwork::FlowNetwork(const net::GraphNetwork& fabric, const net::Network& logical, FlowNetworkOptions options)
    : own_(std::make_unique<SharedFlows>(fabric, options.batch_tolerance)),
      shared_(*own_),
      fabric_(own_->fabric_),
      logical_(logical),
      options_(std::move(options)),
      engine_(own_->engine_) {
  if (static_cast<std::uint64_t>(fabric_.servers) != logical.num_npus())
    throw InputError(fabric.name, fmt::format("the fabric has {} servers but the workload runs on {} NPUs ({})",
                                              fabric_.servers, logical.num_npus(), logical.shape()));
  index_rings();
  net::validate_placement(options_.placement, fabric_.servers, fabric.name);
  if (const auto& r = options_.reconfiguration) {
    for (std::size_t l = 0; l < fabric_.links.size(); ++l)
      if (fabric_.links[l].from < fabric_.servers && fabric_.links[l].to < fabric_.servers)
        mesh_link_.emplace(std::pair{fabric_.links[l].from, fabric_.links[l].to}, static_cast<int>(l));
    const auto n = static_cast<std::size_t>(fabric_.servers);
    if (mesh_link_.size() != n * (n - 1) || fabric_.switches != 0)
      throw InputError(fabric.name,
                       "a reconfigurable fabric must be a full mesh of servers (a link for every ordered pair)");
    if (!(r->period_ns > 0) || !(r->latency_ns >= 0) || !(r->circuit_gbps > 0) || !r->allocate)
      throw InputError(fabric.name,
                       "reconfiguration: period and circuit bandwidth must be > 0, latency >= 0, and allocate set");
    circuits_ = r->initial;
    engine_.set_capacities(circuit_capacities(circuits_));
    next_boundary_ns_ = r->period_ns;
  }
}

std::vector<double> FlowNetwork::circuit_capacities(const std::vector<std::pair<int, int>>& circuits) const {
  std::vector<double> gbps(fabric_.links.size(), 0.0);
  for (const auto& c : circuits) {
    const auto it = mesh_link_.find(c);
    if (it == mesh_link_.end())
      throw InputError("reconfiguration", fmt::format("no link {} -> {} for a circuit", c.first, c.second));
    gbps[static_cast<std::size_t>(it->second)] += options_.reconfiguration->circuit_gbps;
  }
  return gbps;
}

double FlowNetwork::next_event_ns() const {
  if (!finished_.empty()) return engine_.now_ns();
  const double net = engine_.next_event_ns();
  if (!options_.reconfiguration) return net;
  return std::min(net, reconfiguration_event_ns());
}

// Demand-driven (Appendix D): flows waiting without a circuit while some circuit carries nothing
// re-plan the circuits now rather than at the next period boundary.
void FlowNetwork::demand_driven_trigger() {
  const auto& sending = engine_.sending();
  if (std::none_of(sending.begin(), sending.end(), [&](int f) { return engine_.rate_bytes_per_ns(f) <= 0; })) return;
  std::set<std::pair<int, int>> busy;
  for (int f : sending)
    if (engine_.rate_bytes_per_ns(f) > 0) {
      const auto& fl = engine_.flows()[static_cast<std::size_t>(f)];
      busy.emplace(fl.src, fl.dst);
    }
  for (const auto& c : circuits_)
    if (!busy.count(c)) {
      next_boundary_ns_ = std::min(next_boundary_ns_, engine_.now_ns());
      return;
    }
}

double FlowNetwork::reconfiguration_event_ns() const {
  return pending_ ? std::min(pending_at_ns_, next_boundary_ns_) : next_boundary_ns_;
}

// At a period boundary: the demand left in the flows sending now goes to `allocate`; new
// circuits take the links down until latency_ns has passed. At the end of a reconfiguration: the
// new circuits carry traffic.
void FlowNetwork::reconfigure() {
  const auto& r = *options_.reconfiguration;
  if (pending_ && pending_at_ns_ <= next_boundary_ns_) {
    engine_.advance_to(pending_at_ns_);
    circuits_ = std::move(*pending_);
    pending_.reset();
    engine_.set_capacities(circuit_capacities(circuits_));
    return;
  }
  engine_.advance_to(next_boundary_ns_);
  next_boundary_ns_ += r.period_ns;
  if (pending_) return;  // still reconfiguring: this boundary passes
  std::map<std::pair<int, int>, double> left;
  for (int f : engine_.sending()) {
    const auto& fl = engine_.flows()[static_cast<std::size_t>(f)];
    const double bytes = engine_.remaining_bytes(f);
    if (fl.src >= 0 && fl.dst >= 0 && bytes > 1e-9 * fl.bytes) left[{fl.src, fl.dst}] += bytes;
  }
  if (left.empty()) return;
  std::vector<std::tuple<int, int, double>> demand;
  for (const auto& [pair, bytes] : left) demand.emplace_back(pair.first, pair.second, bytes);
  auto next = r.allocate(demand);
  // Progress needs a circuit for some pair with demand (else every flow could wait forever).
  if (std::none_of(next.begin(), next.end(), [&](const auto& c) { return left.count(c) > 0; }))
    throw InputError("reconfiguration", "the allocation gave no circuit to any pair with demand");
  auto sorted_next = next, sorted_now = circuits_;
  std::sort(sorted_next.begin(), sorted_next.end());
  std::sort(sorted_now.begin(), sorted_now.end());
  if (sorted_next == sorted_now) return;
  ++reconfigurations_;
  reconfiguring_ns_ += r.latency_ns;
  engine_.set_capacities(std::vector<double>(fabric_.links.size(), 0.0));
  pending_ = std::move(next);
  pending_at_ns_ = engine_.now_ns() + r.latency_ns;
}

const std::vector<std::vector<int>>& FlowNetwork::groups(const std::vector<int>& dims) {
  auto it = groups_.find(dims);
  if (it == groups_.end()) {
    auto groups = net::npu_groups(logical_, dims, options_.placement);
    // The fabric keys its rings by a group's servers in ascending order (net::validate); a placed
    // group lists them in NPU order: look its rings up once, here.
    if (!options_.placement.empty())
      for (const auto& g : groups) {
        auto sorted = g;
        std::sort(sorted.begin(), sorted.end());
        const auto r = rings_.find(sorted);
        if (r != rings_.end() && sorted != g) rings_.emplace(g, r->second);
      }
    it = groups_.emplace(dims, std::move(groups)).first;
  }
  return it->second;
}

const std::vector<std::vector<int>>& FlowNetwork::rings_of(const std::vector<int>& group) const {
  static const std::vector<std::vector<int>> none;
  const auto it = rings_.find(group);
  return it == rings_.end() ? none : it->second;
}

void FlowNetwork::start(int id, const workload::Node& comm, double now_ns) {
  if (options_.reconfiguration && engine_.idle()) {
    // Boundaries that passed while nothing was sending changed nothing: the next one after now.
    const double period = options_.reconfiguration->period_ns;
    if (next_boundary_ns_ < now_ns) next_boundary_ns_ += std::ceil((now_ns - next_boundary_ns_) / period) * period;
  }
  auto& flows = engine_.flows();
  const std::size_t first = flows.size();
  std::vector<int> ends;
  if (comm.comm == workload::CommKind::kPointToPoint) {
    for (int npu = 0; npu < static_cast<int>(logical_.num_npus()); ++npu)
      ends.push_back(flow::point_to_point(
          shared_.router(), net::placed(options_.placement, npu),
          net::placed(options_.placement, net::next_along(logical_, npu, comm.dims.at(0))), comm.bytes, now_ns, flows));
  } else {
    for (const auto& group : groups(comm.dims)) {
      const int n = static_cast<int>(group.size());
      if (n < 2) continue;
      if (comm.op == CollectiveKind::kAllToAll) {
        ends.push_back(flow::all_to_all(shared_.router(), group, comm.bytes, now_ns, flows));
        continue;
      }
      const int steps = comm.op == CollectiveKind::kAllReduce ? 2 * (n - 1) : n - 1;
      const auto& own = rings_of(group);
      const auto& rings = own.empty() ? std::vector<std::vector<int>>{group} : own;
      const double share = comm.bytes / static_cast<double>(rings.size());
      for (const auto& ring : rings)
        ends.push_back(options_.stepped_rings
                           ? flow::ring_collective(shared_.router(), ring, share, steps, now_ns, flows)
                           : flow::ring_pipelined(shared_.router(), ring, share, steps, now_ns, flows));
    }
  }
  const int join = flow::barrier(now_ns, flows, ends);
  for (std::size_t f = first; f < flows.size(); ++f) bytes_sent_ += flows[f].path.empty() ? 0.0 : flows[f].bytes;
  engine_.admit();
  shared_.join_.emplace(join, std::pair{this, id});
  ++in_flight_;
}

// As start() builds them, with the builders' own counts (sim/flow/traffic.h), and one join.
std::size_t FlowNetwork::flows_of(const workload::Node& comm) {
  std::size_t count = 1;
  if (comm.comm == workload::CommKind::kPointToPoint) return count + logical_.num_npus();
  for (const auto& group : groups(comm.dims)) {
    const std::size_t n = group.size();
    if (n < 2) continue;
    if (comm.op == CollectiveKind::kAllToAll) {
      count += flow::all_to_all_flows(n);
      continue;
    }
    const std::size_t steps = comm.op == CollectiveKind::kAllReduce ? 2 * (n - 1) : n - 1;
    const auto& own = rings_of(group);
    for (std::size_t r = 0; r < std::max<std::size_t>(own.size(), 1); ++r) {
      const std::size_t m = own.empty() ? n : own[r].size();
      count += options_.stepped_rings ? flow::ring_collective_flows(m, steps) : flow::ring_pipelined_flows(m, steps);
    }
  }
  return count;
}

void FlowNetwork::reserve_flows(const workload::Dag& dag) {
  std::size_t count = engine_.flows().size();
  for (const auto& node : dag.nodes)
    if (node.kind == workload::NodeKind::kComm && node.bytes > 0 && !node.dims.empty()) count += flows_of(node);
  engine_.flows().reserve(count);
}

void FlowNetwork::step(std::vector<int>& finished) {
  if (!finished_.empty()) {  // another job's network stepped the engine
    in_flight_ -= static_cast<int>(finished_.size());
    finished.insert(finished.end(), finished_.begin(), finished_.end());
    finished_.clear();
    return;
  }
  // Flows whose last byte is due at a boundary finish first: they are no demand there.
  if (options_.reconfiguration && reconfiguration_event_ns() < engine_.next_event_ns()) {
    reconfigure();
    return;
  }
  auto& completed = shared_.completed_;
  completed.clear();
  engine_.step(completed);
  if (options_.reconfiguration && options_.reconfiguration->on_demand && !pending_) demand_driven_trigger();
  for (int f : completed) {
    const auto it = shared_.join_.find(f);
    if (it == shared_.join_.end()) continue;
    const auto [network, id] = it->second;
    shared_.join_.erase(it);
    if (network != this) {
      network->finished_.push_back(id);
      continue;
    }
    --in_flight_;
    finished.push_back(id);
  }
}

LinkUtilization link_utilization(const FabricRun& run) {
  LinkUtilization u;
  double sum = 0;
  for (std::size_t l = 0; l < run.fabric.links.size(); ++l) {
    if (run.flows.link_bytes[l] <= 0 || run.link_capacity_bytes[l] <= 0) continue;
    const double x = run.flows.link_bytes[l] / run.link_capacity_bytes[l];
    sum += x;
    u.max = std::max(u.max, x);
    ++u.links_used;
  }
  u.mean = u.links_used > 0 ? sum / u.links_used : 0.0;
  return u;
}

double server_bandwidth_gbps(const net::GraphNetwork& fabric) {
  double total = 0;
  for (const auto& l : fabric.links)
    if (l.from < fabric.servers) total += l.gbps;
  return fabric.servers > 0 ? total / fabric.servers : 0.0;
}

FabricRun simulate_workload(const workload::Dag& dag, const net::Network& logical, const net::GraphNetwork& fabric,
                            const workload::ComputeModel& compute, FlowNetworkOptions options) {
  workload::validate(dag, logical.num_dims(), dag.name);
  std::vector<double> compute_ns(dag.nodes.size());
  for (std::size_t i = 0; i < dag.nodes.size(); ++i) compute_ns[i] = compute.node_time_ns(dag.nodes[i]);
  FlowNetwork network(fabric, logical, std::move(options));
  network.reserve_flows(dag);
  FabricRun run;
  run.result = run_dag(dag, compute_ns, network, server_bandwidth_gbps(network.fabric()));
  run.fabric = network.fabric();
  run.flows = network.engine().result();
  run.link_capacity_bytes = network.engine().link_capacity_bytes(run.result.total_ns);
  run.flow_count = network.engine().flows().size();
  run.traffic = flow::traffic_matrix(run.fabric.servers, network.engine().flows());
  run.reconfigurations = network.reconfigurations();
  run.reconfiguring_ns = network.reconfiguring_ns();
  return run;
}

}  // namespace chorus::sim
