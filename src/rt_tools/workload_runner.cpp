// `chorus run workload` (workload_runner.h, docs/syndicate.md "Running a plan").
#include "rt_tools/workload_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "core/error.h"
#include "core/rng.h"
#include "rt/enforcer/enforcer.h"
#include "rt/enforcer/plan_switch.h"
#include "rt/rendezvous/mpi_env.h"
#include "rt/runtime.h"
#include "syndicate/joint_optimizer.h"
#include "syndicate/plan_json.h"
#include "syndicate/workloads.h"

namespace chorus::rt {

namespace {

using syndicate::Kind;

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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Buffer layout of a comm-op on the runtime: f32 elements; all-to-all as N blocks.
struct Layout {
  OpKind kind = OpKind::all_reduce;
  std::size_t elements = 0;
  std::size_t block = 0;  // all-to-all: elements per block
};

Layout layout_of(const syndicate::CommOp& op, int world) {
  const auto where = fmt::format("comm-op '{}'", op.name);
  if (op.ranks() != world)
    throw InputError(where, fmt::format("spans {} ranks; the job has {} (run comm-ops over every rank)", op.ranks(), world));
  Layout l;
  if (op.kind == Kind::kAllReduce) {
    l.elements = std::max<std::size_t>(1, static_cast<std::size_t>(op.bytes) / 4);
  } else if (op.kind == Kind::kAllToAll) {
    l.kind = OpKind::all_to_all_single;
    l.block = std::max<std::size_t>(1, static_cast<std::size_t>(op.bytes / world) / 4);
    l.elements = l.block * static_cast<std::size_t>(world);
  } else {
    throw InputError(where, fmt::format("{} comm-ops are not run by the enforcer yet (all_reduce, all_to_all)",
                                        coll::motif::to_string(op.kind)));
  }
  return l;
}

// The runtime groups the motifs use, created on every rank in the same order.
class Groups {
 public:
  explicit Groups(int world) : world_(world) {}
  // The group name for `ranks` on `backend`; new_group() the first time.
  const std::string& get(const std::string& backend, const std::vector<int>& ranks) {
    std::string name = group_name(backend, ranks, world_);
    auto [it, fresh] = names_.insert(name);
    if (fresh && name != backend) new_group(name, ranks, backend);
    return *it;
  }

 private:
  int world_;
  std::set<std::string> names_;
};

// What rank `rank` does in step `s` of option `opt` of comm-op `op` (its motif, or idle).
EnforcedStep rank_step(const syndicate::Topology& topo, const syndicate::CommOp& op, const syndicate::OptionCost& opt, int s,
                       const std::vector<coll::motif::Motif>& motifs, const Layout& l, int rank, int world, Groups& groups) {
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
    switch (mo.kind) {
      case Kind::kAllReduce: e.kind = OpKind::all_reduce; break;
      case Kind::kReduce: e.kind = OpKind::reduce; break;
      case Kind::kBroadcast: e.kind = OpKind::broadcast; break;
      case Kind::kAllToAll: e.kind = OpKind::all_to_allv; break;
      default: throw InputError(where, fmt::format("motif {} is not run by the enforcer yet", coll::motif::to_string(mo.kind)));
    }
    if (mo.kind == Kind::kReduce || mo.kind == Kind::kBroadcast) {
      std::vector<int> sorted = mo.ranks;
      std::sort(sorted.begin(), sorted.end());
      e.root = static_cast<int>(std::find(sorted.begin(), sorted.end(), mo.root) - sorted.begin());
    }
    if (mo.kind != Kind::kAllToAll) {
      e.offset = lo;
      e.count = hi > lo ? hi - lo : 0;
      if (e.count == 0) e.idle = true;
      continue;
    }
    const std::size_t seg_lo = std::min(lo, l.block), seg_hi = std::min(hi, l.block);
    for (auto* v : {&e.send_counts, &e.send_displs, &e.recv_counts, &e.recv_displs}) v->assign(static_cast<std::size_t>(world), 0);
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
void calibrate(syndicate::Problem& p, int rank, int world, Groups& groups, const std::string& world_backend, int reps) {
  std::map<std::string, double> measured;
  std::vector<std::vector<std::vector<double>>> times(p.comms.size());
  for (std::size_t c = 0; c < p.comms.size(); ++c) {
    const auto& cc = p.comms[c];
    const Layout l = layout_of(cc.op, world);
    std::vector<float> in(l.elements, 1.0f), out(l.kind == OpKind::all_to_all_single ? l.elements : 0);
    times[c].resize(cc.options.size());
    for (std::size_t o = 0; o < cc.options.size(); ++o) {
      const auto& opt = cc.options[o];
      const auto motifs = syndicate::expand(cc.op, opt.option).motifs;
      for (std::size_t s = 0; s < opt.steps.size(); ++s) {
        const auto& st = opt.steps[s];
        const std::string key = fmt::format("{}|{}|{}|{}|{}|{}", coll::motif::to_string(st.kind), st.group, st.bytes, st.motifs,
                                            st.channels, l.elements);
        if (!measured.count(key)) {
          const EnforcedStep e = rank_step(p.topology, cc.op, opt, static_cast<int>(s), motifs, l, rank, world, groups);
          std::vector<double> t;
          for (int r = 0; r <= reps; ++r) {
            barrier(world_backend);
            const auto t0 = std::chrono::steady_clock::now();
            run_step(e, DType::f32, in.data(), out.data()).wait();
            if (r > 0) t.push_back(std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count());
          }
          double m = st.channels == 0 ? 0.0 : median(t);
          all_reduce(world_backend, &m, &m, 1, DType::f64, ReduceOp::max);
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

struct Built {
  EnforcerPlan plan;
  std::vector<Layout> layouts;
};

// This rank's steps of every comm-op of the plan, with the schedule's sequence numbers.
Built build_plan(const syndicate::Problem& p, const syndicate::PlanChoice& choice, const syndicate::Schedule& sched, int rank,
                 int world, Groups& groups) {
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
      if (p.comm_of_node[static_cast<std::size_t>(d)] >= 0) op.deps.push_back(p.comm_of_node[static_cast<std::size_t>(d)]);
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

float ar_input(int rank, std::size_t op, std::size_t i) {
  return static_cast<float>((rank + 1) * static_cast<int>(i % 7 + 1) + static_cast<int>(op % 3));
}
float aa_input(int src, int dst, std::size_t i) { return static_cast<float>(src * 1000 + dst * 10 + static_cast<int>(i % 10)); }


syndicate::Method parse_method(const std::string& text) {
  for (auto m : syndicate::all_methods())
    if (text == syndicate::to_string(m)) return m;
  throw InputError("--method", "unknown method '" + text + "' (syndicate, greedy, s-sched, s-exec, bs+, fifo)");
}

}  // namespace

nlohmann::json run_workload_on_ranks(const WorkloadRunOptions& o) {
  if (o.repeat < 1 || o.repeat > 1000) throw InputError("--repeat", fmt::format("must be in 1..1000, got {}", o.repeat));
 (void)parse_method(o.method);
  (void)parse_method(o.switch_method);
  if (o.switch_after < 0) throw InputError("--switch-after", fmt::format("must be >= 0, got {}", o.switch_after));
  if (o.costs != "measured" && o.costs != "model") throw InputError("--costs", "must be measured or model, got '" + o.costs + "'");
  if (o.compute != "sleep" && o.compute != "busy") throw InputError("--compute", "must be sleep or busy, got '" + o.compute + "'");
  if (!(o.submit_jitter_us >= 0) || o.submit_jitter_us > 1e6)
    throw InputError("--submit-jitter-us", fmt::format("must be in 0..1e6, got {}", o.submit_jitter_us));
  // The channels decide the backends to start (without mpirun, the mpi channel is left out);
  // "host" is sized to the job once it runs.
  auto available = available_backends();
  if (!launched_by_mpirun()) std::erase(available, std::string("mpi"));
  const auto topo = syndicate::with_backends(syndicate::load_topology(o.topology, 2, "--topology"), available, "--topology");
  // Every channel's first backend is what drives it here.
  std::set<std::string> wanted;
  for (const auto& ch : topo.channels) {
    if (ch.backends.empty() || std::find(available.begin(), available.end(), ch.backends.front()) == available.end())
      throw InputError("--topology", fmt::format("channel '{}' of topology '{}' has no runtime backend here (its backends: {}; "
                                                 "available: {})",
                                                 ch.name, topo.name, fmt::join(ch.backends, ", "), fmt::join(available, ", ")));
    wanted.insert(ch.backends.front());
  }
  init(std::vector<std::string>(wanted.begin(), wanted.end()));
  struct Finalize {
    ~Finalize() { finalize(); }
  } finalize_at_exit;
  const std::string world_backend = wanted.count("shm") ? "shm" : *wanted.begin();
  const int world = rt::size(world_backend);  // qualified: std::size(std::string) is found by ADL
  const int me = rt::rank(world_backend);
  // The topology sized to the job (the built-in "host" takes the job's size).
  const auto sized =
      o.topology == "host" ? syndicate::with_backends(syndicate::load_topology("host", world, "--topology"), available, "--topology") : topo;
  if (sized.npus() != world)
    throw InputError("--topology", fmt::format("topology '{}' has {} NPUs; the job has {} ranks", sized.name, sized.npus(), world));
  const auto dag = syndicate::load_workload_dag(o.workload, sized, o.iterations);
  auto problem = syndicate::make_problem(dag, sized, {});
  Groups groups(world);
  const bool measured = o.plan_file.empty() && o.costs == "measured";
  double calibration_s = 0;
  if (measured) {
    const auto t0 = std::chrono::steady_clock::now();
    calibrate(problem, me, world, groups, world_backend, 5);
    calibration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  syndicate::Scheduler scheduler(problem);
  syndicate::MethodResult planned;
  if (!o.plan_file.empty()) {
    const auto loaded = syndicate::read_plan_file(problem, o.plan_file);
    planned.plan = loaded.plan;
    planned.sched = loaded.sched;
    planned.schedule = scheduler.run(planned.plan, planned.sched, true);
  } else {
    syndicate::SearchOptions search;
    search.seed = o.seed;
    search.max_evaluations = o.evaluations;
    search.min_evaluations = std::min(search.min_evaluations, o.evaluations);
    search.time_budget_s = 1e9;  // evaluations bound the search: every rank finds the same plan
    planned = syndicate::run_method(parse_method(o.method), scheduler, problem, search);
  }
  // The plan running now: this rank's steps, the compute order, the enforcer.
  struct Active {
    syndicate::MethodResult planned;
    Built built;
    std::vector<int> compute_order;
    std::unique_ptr<Enforcer> enforcer;
  };
  auto activate = [&](syndicate::MethodResult planned_result) {
    auto a = std::make_unique<Active>();
    a->planned = std::move(planned_result);
    a->built = build_plan(problem, a->planned.plan, a->planned.schedule, me, world, groups);
    // Compute in the order the optimizer's schedule ran it.
    for (std::size_t n = 0; n < dag.nodes.size(); ++n)
      if (problem.comm_of_node[n] < 0) a->compute_order.push_back(static_cast<int>(n));
    std::stable_sort(a->compute_order.begin(), a->compute_order.end(), [&](int x, int y) {
      return a->planned.schedule.node_end_ns[static_cast<std::size_t>(x)] < a->planned.schedule.node_end_ns[static_cast<std::size_t>(y)];
    });
    a->enforcer = std::make_unique<Enforcer>(a->built.plan);
    return a;
  };
  auto active = activate(planned);

  const std::size_t ops = problem.comms.size();
  std::vector<std::vector<float>> in(ops), out(ops);
  Rng jitter(o.seed * 1000003u + static_cast<std::uint64_t>(me));
  std::vector<double> times, final_times;  // every run; the runs of the last plan
  double submit_wait_ns = 0, order_wait_ns = 0;
  double compute_ns = 0, exposed_ns = 0, submit_ns = 0;  // the application thread's time, all runs
  std::string check = "passed";
  std::vector<int> issue_order;  // every run's, concatenated
  int switches = 0, aborts = 0, proposals = 0;
  std::vector<double> order_wait_fraction;  // per run, slowest rank
  nlohmann::json plans = nlohmann::json::array();
  auto plan_entry = [&](const syndicate::MethodResult& r, int from_run) {
    plans.push_back({{"method", std::string(syndicate::to_string(r.method))},
                     {"from_run", from_run},
                     {"predicted_iteration_time_ns", r.schedule.iteration_ns}});
  };
  plan_entry(active->planned, 0);
  for (int run = 0; run < o.repeat; ++run) {
    const Built& built = active->built;
    Enforcer& enforcer = *active->enforcer;
    for (std::size_t c = 0; c < ops; ++c) {
      in[c].assign(built.layouts[c].elements, 0.0f);
      out[c].assign(built.plan.ops[c].kind == OpKind::all_to_all_single ? built.layouts[c].elements : 0, 0.0f);
      for (std::size_t i = 0; i < built.layouts[c].elements; ++i)
        in[c][i] = built.plan.ops[c].kind == OpKind::all_reduce ? ar_input(me, c, i)
                                                                : aa_input(me, static_cast<int>(i / built.layouts[c].block), i % built.layouts[c].block);
    }
    barrier(world_backend);  // line the ranks up
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
    for (int n : active->compute_order) {
      const auto w0 = std::chrono::steady_clock::now();
      for (int d : dag.nodes[static_cast<std::size_t>(n)].deps)
        if (problem.comm_of_node[static_cast<std::size_t>(d)] >= 0) enforcer.wait(problem.comm_of_node[static_cast<std::size_t>(d)]);
      const auto c0 = std::chrono::steady_clock::now();
      exposed_ns += std::chrono::duration<double, std::nano>(c0 - w0).count();
      const auto until = c0 + std::chrono::duration<double, std::nano>(problem.compute_ns[static_cast<std::size_t>(n)]);
      // sleep: the core is free for the communication, except the last 100 us, spun so that
      // the wake-up's latency does not lengthen the node; busy: spun throughout.
      if (o.compute == "sleep") std::this_thread::sleep_until(until - std::chrono::microseconds(100));
      while (std::chrono::steady_clock::now() < until) {
      }
      compute_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - c0).count();
      done[static_cast<std::size_t>(n)] = 1;
      const auto s0 = std::chrono::steady_clock::now();
      try_submit();
      submit_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - s0).count();
    }
    const auto stats = enforcer.finish();
    const double elapsed = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    times.push_back(elapsed);
    final_times.push_back(elapsed);
    submit_wait_ns += stats.submit_wait_ns;
    order_wait_ns += stats.order_wait_ns;
    issue_order.insert(issue_order.end(), stats.issue_order.begin(), stats.issue_order.end());
    // Check every comm-op's result.
    for (std::size_t c = 0; c < ops && check == "passed"; ++c) {
      for (std::size_t i = 0; i < built.layouts[c].elements; ++i) {
        float want = 0, got = 0;
        if (built.plan.ops[c].kind == OpKind::all_reduce) {
          for (int r = 0; r < world; ++r) want += ar_input(r, c, i);
          got = in[c][i];
        } else {
          want = aa_input(static_cast<int>(i / built.layouts[c].block), me, i % built.layouts[c].block);
          got = out[c][i];
        }
        if (got != want) {
          check = fmt::format("rank {} run {} comm-op '{}' element {}: {} != {}", me, run, built.plan.ops[c].name, i, got, want);
          break;
        }
      }
    }
    if (run + 1 == o.repeat) break;
    // Replanning (Sec. 4.4): the enforcers' order waits, slowest rank, above 5 % of the run in
    // two consecutive runs, or a forced switch after --switch-after runs. Every rank sees the
    // same all-reduced numbers, so every rank takes part in the same two-phase commits.
    double fraction = stats.order_wait_ns / elapsed;
    all_reduce(world_backend, &fraction, &fraction, 1, DType::f64, ReduceOp::max);
    order_wait_fraction.push_back(fraction);
    const std::size_t k = order_wait_fraction.size();
    const bool replan = o.replan && k >= 2 && order_wait_fraction[k - 1] > 0.05 && order_wait_fraction[k - 2] > 0.05;
    const bool forced = o.switch_after > 0 && run + 1 == o.switch_after;
    if (!replan && !forced) continue;
    ++proposals;
    // Rank 0 is the central optimizer: it searches (a new seed per proposal) and proposes.
    std::string proposal;
    if (me == 0) {
      syndicate::SearchOptions search;
      search.seed = o.seed + static_cast<std::uint64_t>(proposals);
      search.max_evaluations = o.evaluations;
      search.min_evaluations = std::min(search.min_evaluations, o.evaluations);
      const auto m = forced ? parse_method(o.switch_method) : syndicate::Method::kSyndicate;
      proposal = syndicate::plan_to_json(problem, syndicate::run_method(m, scheduler, problem, search)).dump();
    }
    std::unique_ptr<Active> prepared;
    const auto outcome = two_phase_commit(
        world_backend, proposal,
        [&](const std::string& text) {
          if (me == o.veto_rank) return false;
          const auto loaded = syndicate::plan_from_json(problem, nlohmann::json::parse(text), "proposed plan");
          syndicate::MethodResult r;
          r.plan = loaded.plan;
          r.sched = loaded.sched;
          r.schedule = scheduler.run(r.plan, r.sched, true);
          for (auto m : syndicate::all_methods())
            if (nlohmann::json::parse(text).value("method", "") == syndicate::to_string(m)) r.method = m;
          prepared = activate(std::move(r));
          return true;
        },
        [&] { active = std::move(prepared); });
    if (outcome.committed) {
      ++switches;
      final_times.clear();
      plan_entry(active->planned, run + 1);
    } else {
      ++aborts;
    }
  }
  // The same motif order on every rank: each rank's issue order hashed and compared.
  std::uint64_t h = 1469598103934665603ull;
  for (int v : issue_order) h = (h ^ static_cast<std::uint64_t>(v)) * 1099511628211ull;
  const auto mine = static_cast<std::int64_t>(h >> 1);
  std::vector<std::int64_t> hashes(static_cast<std::size_t>(world));
  all_gather(world_backend, &mine, hashes.data(), 1, DType::i64);
  const bool same_order = std::all_of(hashes.begin(), hashes.end(), [&](std::int64_t x) { return x == hashes.front(); });
  std::vector<double> t_max = {median(final_times)};
  all_reduce(world_backend, t_max.data(), t_max.data(), 1, DType::f64, ReduceOp::max);
  int bad = check == "passed" ? 0 : 1;
  all_reduce(world_backend, &bad, &bad, 1, DType::i32, ReduceOp::sum);
  if (bad && check == "passed") check = fmt::format("failed on {} rank(s)", bad);

  nlohmann::json j;
  j["rank"] = me;
  j["ranks"] = world;
  j["workload"] = dag.name;
  j["topology"] = sized.name;
  j["method"] = std::string(syndicate::to_string(active->planned.method));
  j["plan_file"] = o.plan_file;
  j["iterations"] = dag.iterations;
  j["repeat"] = o.repeat;
  j["comm_ops"] = ops;
  j["steps"] = issue_order.size();
  j["check"] = check;
  j["same_order_on_every_rank"] = same_order;
  j["iteration_time_ns"] = t_max[0] / dag.iterations;
  j["predicted_iteration_time_ns"] = active->planned.schedule.iteration_ns;
  j["ratio"] = t_max[0] / dag.iterations / active->planned.schedule.iteration_ns;
  j["plans"] = plans;
  j["plan_switches"] = switches;
  j["plan_switch_aborts"] = aborts;
  j["runs_with_final_plan"] = final_times.size();
  double total = 0;
  for (double t : times) total += t;
  j["submit_wait_fraction"] = submit_wait_ns / total;
  j["order_wait_fraction"] = order_wait_ns / total;
  // Where this rank's application thread spent a run: compute, waiting for communication, submitting.
  j["app_compute_ns"] = compute_ns / o.repeat / dag.iterations;
  j["app_exposed_comm_ns"] = exposed_ns / o.repeat / dag.iterations;
  j["app_submit_ns"] = submit_ns / o.repeat / dag.iterations;
  double planned_compute = 0;
  for (int n : active->compute_order) planned_compute += problem.compute_ns[static_cast<std::size_t>(n)];
  j["planned_compute_ns"] = planned_compute / dag.iterations;
  j["compute"] = o.compute;
  j["costs"] = measured ? "measured" : "model";
  j["calibration_s"] = calibration_s;
  j["submit_jitter_us"] = o.submit_jitter_us;
  return j;
}

std::string format_workload_report(const nlohmann::json& r) {
  return fmt::format(
      "{} on {} ({} ranks), plan by {}: {} comm-ops, {} steps per run, {} iterations x {} runs\n"
      "  iteration time  measured {:.3f} ms   predicted {:.3f} ms   ratio {:.3f}\n"
      "  check {}   same motif order on every rank: {}   enforcer waiting for submissions: {:.1f}%\n",
      r["workload"].get<std::string>(), r["topology"].get<std::string>(), r["ranks"].get<int>(), r["method"].get<std::string>(),
      r["comm_ops"].get<std::size_t>(), r["steps"].get<std::size_t>(), r["iterations"].get<int>(), r["repeat"].get<int>(),
      r["iteration_time_ns"].get<double>() / 1e6, r["predicted_iteration_time_ns"].get<double>() / 1e6, r["ratio"].get<double>(),
      r["check"].get<std::string>(), r["same_order_on_every_rank"].get<bool>() ? "yes" : "NO",
      100 * r["submit_wait_fraction"].get<double>());
}

}  // namespace chorus::rt
