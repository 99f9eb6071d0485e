// optSched as a list scheduler (opt_sched.h, docs/syndicate.md).
#include "syndicate/opt_sched.h"

#include <algorithm>
#include <functional>

namespace chorus::syndicate {

std::string_view to_string(Order order) {
  switch (order) {
    case Order::kCriticalPath:
      return "critical-path";
    case Order::kFifo:
      return "fifo";
    case Order::kLifo:
      return "lifo";
  }
  return "?";
}

Scheduler::Scheduler(const Problem& problem) : p_(problem) {}

Schedule Scheduler::run(const PlanChoice& plan, const SchedOptions& options, bool record) {
  const auto& nodes = p_.dag.nodes;
  const int n = static_cast<int>(nodes.size());
  const auto is_comm = [&](int node) { return p_.comm_of_node[static_cast<std::size_t>(node)] >= 0; };
  auto option_of = [&](int node) -> const OptionCost& {
    const int c = p_.comm_of_node[static_cast<std::size_t>(node)];
    return p_.comms[static_cast<std::size_t>(c)].options[static_cast<std::size_t>(plan[static_cast<std::size_t>(c)])];
  };
  auto tasks_of = [&](int node) { return !is_comm(node) ? 1 : static_cast<int>(option_of(node).steps.size()); };

  // Task numbering: node i's tasks are base_[i] .. base_[i + 1) (a compute node has one).
  base_.assign(static_cast<std::size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) base_[static_cast<std::size_t>(i) + 1] = base_[static_cast<std::size_t>(i)] + tasks_of(i);
  const int tasks = base_[static_cast<std::size_t>(n)];
  auto& node_of_task = node_of_task_;
  node_of_task.resize(static_cast<std::size_t>(tasks));
  for (int i = 0; i < n; ++i)
    for (int t = base_[static_cast<std::size_t>(i)]; t < base_[static_cast<std::size_t>(i) + 1]; ++t)
      node_of_task[static_cast<std::size_t>(t)] = i;

  auto duration = [&](int t) {
    const int node = node_of_task[static_cast<std::size_t>(t)];
    if (!is_comm(node)) return p_.compute_ns[static_cast<std::size_t>(node)];
    return option_of(node).steps[static_cast<std::size_t>(t - base_[static_cast<std::size_t>(node)])].duration_ns;
  };

  // Priorities.
  priority_.assign(static_cast<std::size_t>(tasks), 0.0);
  if (options.order == Order::kCriticalPath) {
    entry_priority_.assign(static_cast<std::size_t>(n), 0.0);
    for (int i = n - 1; i >= 0; --i) {
      double after = 0;
      for (int s : p_.successors[static_cast<std::size_t>(i)])
        after = std::max(after, entry_priority_[static_cast<std::size_t>(s)]);
      const int b = base_[static_cast<std::size_t>(i)];
      if (!is_comm(i)) {
        priority_[static_cast<std::size_t>(b)] = p_.compute_ns[static_cast<std::size_t>(i)] + after;
        entry_priority_[static_cast<std::size_t>(i)] = priority_[static_cast<std::size_t>(b)];
        continue;
      }
      const auto& opt = option_of(i);
      double entry = 0;
      for (int s = static_cast<int>(opt.steps.size()) - 1; s >= 0; --s) {
        double below = opt.children[static_cast<std::size_t>(s)].empty() ? after : 0.0;
        for (int c : opt.children[static_cast<std::size_t>(s)])
          below = std::max(below, priority_[static_cast<std::size_t>(b + c)]);
        const double pr = opt.steps[static_cast<std::size_t>(s)].duration_ns + below;
        priority_[static_cast<std::size_t>(b + s)] = pr;
        if (opt.steps[static_cast<std::size_t>(s)].after.empty()) entry = std::max(entry, pr);
      }
      entry_priority_[static_cast<std::size_t>(i)] = entry;
    }
  } else {
    for (int i = 0; i < n; ++i)
      for (int t = base_[static_cast<std::size_t>(i)]; t < base_[static_cast<std::size_t>(i) + 1]; ++t)
        priority_[static_cast<std::size_t>(t)] = options.order == Order::kFifo ? -i : i;
  }
  auto before = [&](int a, int b) {
    const double pa = priority_[static_cast<std::size_t>(a)], pb = priority_[static_cast<std::size_t>(b)];
    return pa != pb ? pa > pb : a < b;
  };

  // Dependency counters.
  pending_.assign(static_cast<std::size_t>(tasks), 0);
  remaining_.assign(static_cast<std::size_t>(n), 0);
  node_pending_.assign(static_cast<std::size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    node_pending_[static_cast<std::size_t>(i)] = static_cast<int>(nodes[static_cast<std::size_t>(i)].deps.size());
    remaining_[static_cast<std::size_t>(i)] =
        base_[static_cast<std::size_t>(i) + 1] - base_[static_cast<std::size_t>(i)];
    if (is_comm(i)) {
      const auto& opt = option_of(i);
      for (std::size_t s = 0; s < opt.steps.size(); ++s)
        pending_[static_cast<std::size_t>(base_[static_cast<std::size_t>(i)]) + s] =
            static_cast<int>(opt.steps[s].after.size());
    }
  }
  start_.assign(static_cast<std::size_t>(tasks), 0.0);
  end_.assign(static_cast<std::size_t>(tasks), 0.0);
  seq_.assign(static_cast<std::size_t>(tasks), -1);
  events_.clear();
  ready_compute_.clear();
  ready_comm_.clear();

  auto release = [&](int t) {
    const int node = node_of_task[static_cast<std::size_t>(t)];
    if (!is_comm(node)) {
      ready_compute_.push_back(node);
      std::push_heap(ready_compute_.begin(), ready_compute_.end(), std::greater<>());
    } else {
      ready_comm_.insert(std::upper_bound(ready_comm_.begin(), ready_comm_.end(), t, before), t);
    }
  };
  // Program-order submission (kFifo, kLifo): `frontier` is the first compute node not yet
  // completed; a comm node after it is not submitted yet, and is released when the frontier
  // passes it (if its dependencies are done by then).
  const bool program_order = options.order != Order::kCriticalPath;
  compute_done_.assign(static_cast<std::size_t>(n), 0);
  int frontier = 0;
  const auto advance = [&] {
    while (frontier < n && (is_comm(frontier) || compute_done_[static_cast<std::size_t>(frontier)])) ++frontier;
  };
  advance();
  auto release_node = [&](int node) {
    if (program_order && is_comm(node) && node > frontier) return;  // the frontier's sweep releases it
    const int b = base_[static_cast<std::size_t>(node)];
    for (int t = b; t < base_[static_cast<std::size_t>(node) + 1]; ++t)
      if (pending_[static_cast<std::size_t>(t)] == 0) release(t);
  };
  for (int i = 0; i < n; ++i)
    if (node_pending_[static_cast<std::size_t>(i)] == 0) release_node(i);

  double now = 0, compute_busy = 0;
  bool compute_running = false;
  int comm_running = 0, next_seq = 0;
  ChannelSet busy = 0;
  auto start = [&](int t) {
    const double d = duration(t);
    start_[static_cast<std::size_t>(t)] = now;
    end_[static_cast<std::size_t>(t)] = now + d;
    events_.push_back({now + d, t});
    std::push_heap(events_.begin(), events_.end(), std::greater<>());
  };
  auto channels = [&](int t) {
    const int node = node_of_task[static_cast<std::size_t>(t)];
    return option_of(node).steps[static_cast<std::size_t>(t - base_[static_cast<std::size_t>(node)])].channels;
  };
  while (true) {
    if (!compute_running && !ready_compute_.empty()) {
      std::pop_heap(ready_compute_.begin(), ready_compute_.end(), std::greater<>());
      const int node = ready_compute_.back();
      ready_compute_.pop_back();
      compute_running = true;
      compute_busy += p_.compute_ns[static_cast<std::size_t>(node)];
      start(base_[static_cast<std::size_t>(node)]);
    }
    ChannelSet wanted = 0;
    for (std::size_t i = 0; i < ready_comm_.size();) {
      const int t = ready_comm_[i];
      const ChannelSet ch = channels(t);
      const bool can = options.single_stream ? comm_running == 0 && wanted == 0 : (ch & (busy | wanted)) == 0;
      if (!can) {
        wanted |= options.single_stream ? ~ChannelSet{0} : ch;
        ++i;
        continue;
      }
      busy |= ch;
      ++comm_running;
      seq_[static_cast<std::size_t>(t)] = next_seq++;
      start(t);
      ready_comm_.erase(ready_comm_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (events_.empty()) break;
    now = events_.front().time;
    while (!events_.empty() && events_.front().time == now) {
      std::pop_heap(events_.begin(), events_.end(), std::greater<>());
      const int t = events_.back().task;
      events_.pop_back();
      const int node = node_of_task[static_cast<std::size_t>(t)];
      const int b = base_[static_cast<std::size_t>(node)];
      if (!is_comm(node)) {
        compute_running = false;
        if (program_order) {
          compute_done_[static_cast<std::size_t>(node)] = 1;
          const int from = frontier;
          advance();
          for (int x = from; x < frontier; ++x)
            if (is_comm(x) && node_pending_[static_cast<std::size_t>(x)] == 0) release_node(x);
        }
      } else {
        busy &= ~channels(t);
        --comm_running;
        for (int c : option_of(node).children[static_cast<std::size_t>(t - b)])
          if (--pending_[static_cast<std::size_t>(b + c)] == 0 && node_pending_[static_cast<std::size_t>(node)] == 0)
            release(b + c);
      }
      if (--remaining_[static_cast<std::size_t>(node)] == 0)
        for (int s : p_.successors[static_cast<std::size_t>(node)])
          if (--node_pending_[static_cast<std::size_t>(s)] == 0) release_node(s);
    }
  }

  Schedule out;
  out.makespan_ns = now;
  out.iteration_ns = now / std::max(1, p_.dag.iterations);
  out.compute_busy_ns = compute_busy;
  out.compute_idle_fraction = now > 0 ? 1.0 - compute_busy / now : 0.0;
  if (record) {
    out.node_end_ns.assign(static_cast<std::size_t>(n), 0.0);
    for (int t = 0; t < tasks; ++t) {
      const int node = node_of_task[static_cast<std::size_t>(t)];
      auto& e = out.node_end_ns[static_cast<std::size_t>(node)];
      e = std::max(e, end_[static_cast<std::size_t>(t)]);
      if (seq_[static_cast<std::size_t>(t)] < 0) continue;
      out.steps.push_back({p_.comm_of_node[static_cast<std::size_t>(node)], t - base_[static_cast<std::size_t>(node)],
                           seq_[static_cast<std::size_t>(t)], start_[static_cast<std::size_t>(t)],
                           end_[static_cast<std::size_t>(t)]});
    }
    std::sort(out.steps.begin(), out.steps.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  }
  return out;
}

std::vector<int> compute_stream_order(const Problem& p, const Schedule& schedule) {
  std::vector<int> order;
  for (std::size_t n = 0; n < p.dag.nodes.size(); ++n)
    if (p.comm_of_node[n] < 0) order.push_back(static_cast<int>(n));
  const auto key = [&](int x) {
    const auto k = static_cast<std::size_t>(x);
    return std::pair<double, double>{schedule.node_end_ns.at(k) - p.compute_ns[k], schedule.node_end_ns[k]};
  };
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return key(x) < key(y); });
  return order;
}

}  // namespace chorus::syndicate
