// A SYNDICATE plan executed on this job's ranks (plan_execution.h).
#include "eval/real/plan_execution.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "core/error.h"
#include "core/stats.h"
#include "rt/rendezvous/mpi_env.h"
#include "rt/runtime_instance.h"
#include "syndicate/topology.h"

namespace chorus::eval {

using rt::available_backends;
using rt::DType;
using rt::EnforcedOp;
using rt::EnforcedStep;
using rt::Enforcer;
using rt::finish_step;
using rt::launched_by_mpirun;
using rt::ReduceOp;
using rt::run_step;
using rt::staging_elements;

namespace {

// The backend that drives a step's channels (the highest dimension's channel wins).
std::string step_backend(const syndicate::Topology& t, syndicate::ChannelSet set, const std::string& fallback) {
  std::string backend = fallback;
  for (std::size_t c = 0; c < t.channels.size(); ++c)
    if (set & (syndicate::ChannelSet{1} << c)) backend = t.channels[c].backends.front();
  return backend;
}

std::string group_name(const std::string& backend, const std::vector<int>& ranks, int world) {
  if (static_cast<int>(ranks.size()) == world) return backend;
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  std::string name = backend + ":";
  for (std::size_t i = 0; i < sorted.size(); ++i) name += (i ? "-" : "") + std::to_string(sorted[i]);
  return name;
}

float ar_input(int rank, std::size_t op, std::size_t i) {
  return static_cast<float>((rank + 1) * static_cast<int>(i % 7 + 1) + static_cast<int>(op % 3));
}

float aa_input(int src, int dst, std::size_t i) {
  return static_cast<float>(src * 1000 + dst * 10 + static_cast<int>(i % 10));
}

// Element i of rank `rank`'s input of comm-op `op` (small integers: every sum is exact in f32).
float input(const Layout& l, int rank, std::size_t op, std::size_t i) {
  return l.kind == CollectiveKind::kAllToAllSingle ? aa_input(rank, static_cast<int>(i / l.block), i % l.block)
                                                   : ar_input(rank, op, i);
}

// Element i of rank `me`'s result (the all-reduce's buffer, else the output buffer), computed
// from the inputs by the operation's definition.
float expected(const Layout& l, int me, int world, std::size_t op, std::size_t i) {
  float sum = 0;
  switch (l.kind) {
    case CollectiveKind::kAllToAllSingle:
      return aa_input(static_cast<int>(i / l.block), me, i % l.block);
    case CollectiveKind::kAllGather:
      return ar_input(static_cast<int>(i / l.block), op, i % l.block);
    case CollectiveKind::kReduceScatter:
      for (int r = 0; r < world; ++r) sum += ar_input(r, op, static_cast<std::size_t>(me) * l.block + i);
      return sum;
    default:
      for (int r = 0; r < world; ++r) sum += ar_input(r, op, i);
      return sum;
  }
}

}  // namespace

const std::string& Groups::get(const std::string& backend, const std::vector<int>& ranks) {
  std::string name = group_name(backend, ranks, world_);
  auto [it, fresh] = names_.insert(name);
  if (fresh && name != backend) runtime_->new_group(name, ranks, backend);
  return *it;
}

JobSession::JobSession(const std::string& name) {
  auto available = available_backends();
  if (!launched_by_mpirun()) std::erase(available, std::string("mpi"));
  const auto topo = syndicate::with_backends(syndicate::load_topology(name, 2, "topology"), available, "topology");
  std::set<std::string> wanted;
  for (const auto& ch : topo.channels) wanted.insert(ch.backends.front());
  runtime = std::make_unique<rt::Runtime>(std::vector<std::string>(wanted.begin(), wanted.end()), rt::InitOptions{});
  job.runtime = runtime.get();
  job.world_backend = wanted.count("shm") ? "shm" : *wanted.begin();
  job.world = runtime->size(job.world_backend);
  job.me = runtime->rank(job.world_backend);
  topology = name == "host" ? syndicate::with_backends(syndicate::load_topology("host", job.world, "topology"),
                                                       available, "topology")
                            : topo;
  if (topology.npus() != job.world)
    throw InputError("topology", fmt::format("topology '{}' has {} NPUs; the job has {} ranks", topology.name,
                                             topology.npus(), job.world));
  groups = Groups(runtime.get(), job.world);
  job.groups = &groups;
}

JobSession::~JobSession() = default;

Layout layout_of(const syndicate::CommOp& op, int world) {
  const auto where = fmt::format("comm-op '{}'", op.name);
  if (op.ranks() != world)
    throw InputError(where,
                     fmt::format("spans {} ranks; the job has {} (run comm-ops over every rank)", op.ranks(), world));
  Layout l;
  if (op.kind == CollectiveKind::kAllReduce) {
    l.elements = std::max<std::size_t>(1, static_cast<std::size_t>(op.bytes) / 4);
  } else if (op.kind == CollectiveKind::kAllToAll) {
    l.kind = CollectiveKind::kAllToAllSingle;
    l.block = std::max<std::size_t>(1, static_cast<std::size_t>(op.bytes / world) / 4);
    l.elements = l.block * static_cast<std::size_t>(world);
  } else if (op.kind == CollectiveKind::kReduceScatter || op.kind == CollectiveKind::kAllGather) {
    l.kind = op.kind;
    const auto n = static_cast<std::size_t>(world);
    l.block = std::max<std::size_t>(1, (static_cast<std::size_t>(op.bytes) / 4 + n - 1) / n);
    l.elements = l.block * n;
  } else {
    throw InputError(
        where,
        fmt::format("{} comm-ops are not run by the enforcer (all_reduce, all_to_all, reduce_scatter, all_gather)",
                    to_string(op.kind)));
  }
  return l;
}

// What rank `rank` does in step `s` of option `opt` of comm-op `op` (its motif, or idle).
EnforcedStep rank_step(const syndicate::Topology& topo, const syndicate::CommOp& op, const syndicate::OptionCost& opt,
                       int s, const std::vector<coll::motif::Motif>& motifs, const Layout& l, int rank, int world,
                       Groups& groups) {
  const auto& st = opt.steps[static_cast<std::size_t>(s)];
  const auto where = fmt::format("comm-op '{}'", op.name);
  EnforcedStep e;
  e.after = st.after;
  for (std::size_t ch = 0; ch < 32; ++ch)
    if (st.channels & (syndicate::ChannelSet{1} << ch)) e.channels.push_back(static_cast<int>(ch));
  const std::string backend = step_backend(topo, st.channels, topo.channels.front().backends.front());
  e.idle = true;
  for (int m = st.first_motif; m < st.first_motif + st.motifs; ++m) {
    const auto& mo = motifs[static_cast<std::size_t>(m)];
    const std::string& g = groups.get(backend, mo.ranks);
    if (std::find(mo.ranks.begin(), mo.ranks.end(), rank) == mo.ranks.end()) continue;
    e.idle = false;
    e.group = g;
    const std::size_t lo = mo.bytes.begin / 4, hi = std::min<std::size_t>(mo.bytes.end / 4, l.elements);
    // An all-to-all motif moves a slice of every block: the runtime's vector form.
    e.kind = mo.kind == CollectiveKind::kAllToAll ? CollectiveKind::kAllToAllv : mo.kind;
    if (mo.kind == CollectiveKind::kReduceScatter || mo.kind == CollectiveKind::kAllGather) {
      // The motif's bytes [b, e) of the tensor's T bytes are, on the runtime, elements
      // [b/T, e/T) x block of every rank's block: the segments of a reduce-scatter or all-gather
      // comm-op cut each block alike, so that rank r's part stays block r whatever the plan.
      if (l.kind != e.kind || mo.ranks.size() != static_cast<std::size_t>(world))
        throw InputError(where,
                         fmt::format("a {} motif inside a {} comm-op over {} of {} ranks is not run by the enforcer",
                                     to_string(mo.kind), to_string(op.kind), mo.ranks.size(), world));
      coll::motif::Bytes total = 1;
      for (const auto& x : motifs) total = std::max(total, x.bytes.end);
      const auto at = [&](coll::motif::Bytes b) { return static_cast<std::size_t>(b * l.block / total); };
      e.block = l.block;
      e.blocks = world;
      e.offset = at(mo.bytes.begin);
      e.count = at(mo.bytes.end) - e.offset;
      if (e.count == 0) e.idle = true;
      continue;
    }
    if (mo.kind == CollectiveKind::kReduce || mo.kind == CollectiveKind::kBroadcast) {
      std::vector<int> sorted = mo.ranks;
      std::sort(sorted.begin(), sorted.end());
      e.root = static_cast<int>(std::find(sorted.begin(), sorted.end(), mo.root) - sorted.begin());
    }
    if (mo.kind != CollectiveKind::kAllToAll) {
      e.offset = lo;
      e.count = hi > lo ? hi - lo : 0;
      if (e.count == 0) e.idle = true;
      continue;
    }
    const std::size_t seg_lo = std::min(lo, l.block), seg_hi = std::min(hi, l.block);
    for (auto* v : {&e.send_counts, &e.send_displs, &e.recv_counts, &e.recv_displs})
      v->assign(static_cast<std::size_t>(world), 0);
    for (std::size_t src = 0; src < mo.ranks.size(); ++src)
      for (int dst : mo.destinations[src]) {
        if (mo.ranks[src] == rank) {
          e.send_counts[static_cast<std::size_t>(dst)] = seg_hi - seg_lo;
          e.send_displs[static_cast<std::size_t>(dst)] = static_cast<std::size_t>(dst) * l.block + seg_lo;
        }
        if (dst == rank) {
          const auto from = static_cast<std::size_t>(mo.ranks[src]);
          e.recv_counts[from] = seg_hi - seg_lo;
          e.recv_displs[from] = from * l.block + seg_lo;
        }
      }
  }
  return e;
}

// Every step of every option timed on the ranks (median of `reps` after one warm-up, slowest
// rank), steps of the same shape once; the problem retimed with them. Collective.
void calibrate(syndicate::Problem& p, const Job& job, int reps) {
  const int rank = job.me, world = job.world;
  Groups& groups = *job.groups;
  const std::string& world_backend = job.world_backend;
  rt::Runtime& runtime = *job.runtime;
  std::map<std::string, double> measured;
  std::vector<std::vector<std::vector<double>>> times(p.comms.size());
  for (std::size_t c = 0; c < p.comms.size(); ++c) {
    const auto& cc = p.comms[c];
    const Layout l = layout_of(cc.op, world);
    std::vector<float> in(l.in_elements(), 1.0f), out(l.out_elements()), staging;
    times[c].resize(cc.options.size());
    for (std::size_t o = 0; o < cc.options.size(); ++o) {
      const auto& opt = cc.options[o];
      const auto motifs = syndicate::expand(cc.op, opt.option).motifs;
      for (std::size_t s = 0; s < opt.steps.size(); ++s) {
        const auto& st = opt.steps[s];
        const std::string key = fmt::format("{}|{}|{}|{}|{}|{}", to_string(st.kind), st.group, st.bytes, st.motifs,
                                            st.channels, l.elements);
        if (!measured.count(key)) {
          const EnforcedStep e = rank_step(p.topology, cc.op, opt, static_cast<int>(s), motifs, l, rank, world, groups);
          std::vector<double> t;
          staging.resize(staging_elements(e));
          for (int r = 0; r <= reps; ++r) {
            runtime.issue(world_backend, rt::calls::barrier(), false);
            const auto t0 = std::chrono::steady_clock::now();
            run_step(runtime, e, DType::f32, in.data(), out.data(), true, staging.data()).wait();
            finish_step(e, DType::f32, out.data(), staging.data());
            if (r > 0)
              t.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
          }
          double m = st.channels == 0 ? 0.0 : median(t);
          runtime.issue(world_backend, rt::calls::all_reduce(&m, &m, 1, DType::f64, ReduceOp::max), false);
          measured[key] = m;
        }
        times[c][o].push_back(measured[key]);
      }
    }
  }
  syndicate::retime(p, [&](int c, int o, int s) {
    return times[static_cast<std::size_t>(c)][static_cast<std::size_t>(o)][static_cast<std::size_t>(s)];
  });
}

// This rank's steps of every comm-op of the plan, with the schedule's sequence numbers.
Built build_plan(const syndicate::Problem& p, const syndicate::PlanChoice& choice, const syndicate::Schedule& sched,
                 int rank, int world, Groups& groups) {
  Built b;
  std::vector<std::vector<int>> seq(p.comms.size());
  for (const auto& s : sched.steps) {
    auto& v = seq[static_cast<std::size_t>(s.comm)];
    if (v.size() <= static_cast<std::size_t>(s.step)) v.resize(static_cast<std::size_t>(s.step) + 1, -1);
    v[static_cast<std::size_t>(s.step)] = s.seq;
  }
  for (std::size_t c = 0; c < p.comms.size(); ++c) {
    const auto& cc = p.comms[c];
    const auto& opt = cc.options[static_cast<std::size_t>(choice[c])];
    const Layout l = layout_of(cc.op, world);
    b.layouts.push_back(l);
    EnforcedOp op;
    op.name = cc.op.name;
    op.kind = l.kind;
    for (int d : p.dag.nodes[static_cast<std::size_t>(cc.op.node)].deps)
      if (p.comm_of_node[static_cast<std::size_t>(d)] >= 0)
        op.deps.push_back(p.comm_of_node[static_cast<std::size_t>(d)]);
    const auto motifs = syndicate::expand(cc.op, opt.option).motifs;
    for (std::size_t s = 0; s < opt.steps.size(); ++s) {
      EnforcedStep e = rank_step(p.topology, cc.op, opt, static_cast<int>(s), motifs, l, rank, world, groups);
      e.seq = s < seq[c].size() ? seq[c][s] : -1;
      op.steps.push_back(std::move(e));
    }
    b.plan.ops.push_back(op);
  }
  return b;
}

std::unique_ptr<Active> activate(const Job& job, const syndicate::Problem& problem, syndicate::MethodResult planned) {
  auto a = std::make_unique<Active>();
  a->planned = std::move(planned);
  a->built = build_plan(problem, a->planned.plan, a->planned.schedule, job.me, job.world, *job.groups);
  // Compute in the order the optimizer's schedule ran it on its compute stream.
  a->compute_order = syndicate::compute_stream_order(problem, a->planned.schedule);
  a->enforcer = std::make_unique<Enforcer>(*job.runtime, a->built.plan);
  return a;
}

// One run of the unrolled DAG under the active plan: inputs filled, ranks lined up, compute
// emulated and comm-ops submitted by this thread while the enforcer runs their steps, every
// result checked.
RunStats run_once(const Job& job, const syndicate::Problem& problem, Active& active, const RunKnobs& o, Rng& jitter,
                  int run) {
  const auto& dag = problem.dag;
  const Built& built = active.built;
  Enforcer& enforcer = *active.enforcer;
  const std::size_t ops = built.plan.ops.size();
  const int me = job.me, world = job.world;
  std::vector<std::vector<float>> in(ops), out(ops);
  RunStats rs;
  for (std::size_t c = 0; c < ops; ++c) {
    const Layout& l = built.layouts[c];
    in[c].assign(l.in_elements(), 0.0f);
    out[c].assign(l.out_elements(), 0.0f);
    for (std::size_t i = 0; i < in[c].size(); ++i) in[c][i] = input(l, me, c, i);
  }
  job.runtime->issue(job.world_backend, rt::calls::barrier(), false);  // line the ranks up
  const auto t0 = std::chrono::steady_clock::now();
  enforcer.start();
  std::vector<char> done(dag.nodes.size(), 0), submitted(ops, 0);
  auto try_submit = [&] {
    for (std::size_t c = 0; c < ops; ++c) {
      if (submitted[c]) continue;
      bool ready = true;
      for (int d : dag.nodes[static_cast<std::size_t>(problem.comms[c].op.node)].deps)
        if (problem.comm_of_node[static_cast<std::size_t>(d)] < 0 && !done[static_cast<std::size_t>(d)]) ready = false;
      if (!ready) continue;
      if (o.submit_jitter_us > 0)
        std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(jitter.uniform(0, o.submit_jitter_us)));
      enforcer.submit(static_cast<int>(c), in[c].data(), out[c].data());
      submitted[c] = 1;
    }
  };
  try_submit();
  rs.compute_start_ns.assign(dag.nodes.size(), 0);
  rs.compute_end_ns.assign(dag.nodes.size(), 0);
  rs.compute_ready_ns.assign(dag.nodes.size(), 0);
  const auto since_start = [&](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::nano>(t - enforcer.started_at()).count();
  };
  for (int n : active.compute_order) {
    const auto w0 = std::chrono::steady_clock::now();
    for (int d : dag.nodes[static_cast<std::size_t>(n)].deps)
      if (problem.comm_of_node[static_cast<std::size_t>(d)] >= 0)
        enforcer.wait(problem.comm_of_node[static_cast<std::size_t>(d)]);
    const auto c0 = std::chrono::steady_clock::now();
    rs.exposed_ns += std::chrono::duration<double, std::nano>(c0 - w0).count();
    const auto until = c0 + std::chrono::duration<double, std::nano>(problem.compute_ns[static_cast<std::size_t>(n)]);
    // sleep: the core is free for the communication, except the last 100 us, spun so that
    // the wake-up's latency does not lengthen the node; busy: spun throughout.
    if (o.compute == "sleep") std::this_thread::sleep_until(until - std::chrono::microseconds(100));
    while (std::chrono::steady_clock::now() < until) {
    }
    const auto c1 = std::chrono::steady_clock::now();
    rs.compute_ns += std::chrono::duration<double, std::nano>(c1 - c0).count();
    rs.compute_ready_ns[static_cast<std::size_t>(n)] = since_start(w0);
    rs.compute_start_ns[static_cast<std::size_t>(n)] = since_start(c0);
    rs.compute_end_ns[static_cast<std::size_t>(n)] = since_start(c1);
    done[static_cast<std::size_t>(n)] = 1;
    const auto s0 = std::chrono::steady_clock::now();
    try_submit();
    rs.submit_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - s0).count();
  }
  rs.enforcer = enforcer.finish();
  rs.elapsed_ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  for (std::size_t c = 0; c < ops && rs.check == "passed"; ++c) {
    const Layout& l = built.layouts[c];
    const bool in_place = l.kind == CollectiveKind::kAllReduce;
    for (std::size_t i = 0; i < (in_place ? l.elements : l.out_elements()); ++i) {
      const float want = expected(l, me, world, c, i), got = in_place ? in[c][i] : out[c][i];
      if (got != want) {
        rs.check = fmt::format("rank {} run {} comm-op '{}' element {}: {} != {}", me, run, built.plan.ops[c].name, i,
                               got, want);
        break;
      }
    }
  }
  return rs;
}

syndicate::Method parse_method(const std::string& text, const std::string& field) {
  for (auto m : syndicate::all_methods())
    if (text == syndicate::to_string(m)) return m;
  throw InputError(field, "unknown method '" + text + "' (syndicate, greedy, s-sched, s-exec, bs+, fifo)");
}

}  // namespace chorus::eval
