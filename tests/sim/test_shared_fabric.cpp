// Several jobs on one graph fabric (sim/jobs, docs/shared-fabric.md). Every expected time is
// worked out by hand in the comments. Units: 8 Gbit/s links carry 1 byte/ns; latencies are 0 so
// that a flow of b bytes alone on a path takes exactly b ns.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "dumbbell_fabric.h"
#include "net/graph/fabrics.h"
#include "net/graph/from_network.h"
#include "net/presets.h"
#include "net/graph/link_faults.h"
#include "net/graph/routing.h"
#include "sim/jobs/job_mix.h"
#include "sim/jobs/job_spec.h"
#include "sim/jobs/placement.h"
#include "sim/jobs/shared_fabric.h"
#include "sim/jobs/time_shift.h"
#include "sim/run_collective.h"
#include "sim/stragglers.h"
#include "tests/common/input_error_of.h"

namespace chorus {
namespace {

using chorus::test_support::input_error_of;

using sim::jobs::SharedJob;

// One data-parallel job of two NPUs (or as many as `servers`): per iteration a compute of `compute_ns`, then an all-reduce of
// `bytes` over both NPUs; the next iteration's compute waits for it.
SharedJob two_npu_job(const std::string& name, std::vector<int> servers, double compute_ns, double bytes,
                      int iterations, double start_ns = 0) {
  SharedJob job;
  job.name = name;
  job.logical.name = "logical";
  job.logical.dims.push_back(net::Dimension{net::DimKind::kRing, static_cast<int>(servers.size()), 100.0, 1, 0.0});
  job.dag.name = name;
  job.dag.iterations = iterations;
  int prev = -1;
  for (int it = 0; it < iterations; ++it) {
    workload::Node c;
    c.name = "compute";
    c.duration_ns = compute_ns;
    c.iteration = it;
    if (prev >= 0) c.deps = {prev};
    const int ci = job.dag.add(c);
    workload::Node a;
    a.name = "allreduce";
    a.kind = workload::NodeKind::kComm;
    a.bytes = bytes;
    a.dims = {0};
    a.iteration = it;
    a.deps = {ci};
    prev = job.dag.add(a);
  }
  for (const auto& n : job.dag.nodes)
    job.compute_ns.push_back(n.kind == workload::NodeKind::kCompute ? n.duration_ns : 0.0);
  job.servers = std::move(servers);
  job.start_ns = start_ns;
  return job;
}

// A ring all-reduce of b bytes over 2 NPUs is 2(n-1) = 2 steps of b/2: one pipelined flow per ring
// edge of b bytes. Alone on 1 B/ns links: b ns. Compute 20 ms, all-reduce of 10 MB: 10 ms, so the
// communication is a third of the 30 ms iteration.
constexpr double kCompute = 20e6;
constexpr double kBytes = 10e6;
constexpr double kAloneComm = 10e6;

TEST(SharedFabric, OverlappingAllReducesOnOneBottleneckTakeTwiceAsLong) {
  const auto fabric = test_support::dumbbell();
  // Job x on servers 0 and 2, job y on 1 and 3: both rings' flows 0->2 and 1->3 cross A->B, 2->0 and
  // 3->1 cross B->A; each of those links carries two flows at 0.5 B/ns each.
  const auto x = two_npu_job("x", {0, 2}, kCompute, kBytes, 2);
  const auto y = two_npu_job("y", {1, 3}, kCompute, kBytes, 2);
  const auto alone = sim::jobs::simulate_shared_fabric(fabric, {&x});
  EXPECT_DOUBLE_EQ(alone.jobs[0].result.total_ns, 2 * (kCompute + kAloneComm));
  const auto both = sim::jobs::simulate_shared_fabric(fabric, {&x, &y});
  for (const auto& job : both.jobs) {
    // Each all-reduce takes 2 x 10 ms: iterations of 20 + 20 ms.
    ASSERT_EQ(job.iteration_ns.size(), 2u);
    EXPECT_NEAR(job.iteration_ns[0], kCompute + 2 * kAloneComm, 1e-3);
    EXPECT_NEAR(job.iteration_ns[1], kCompute + 2 * kAloneComm, 1e-3);
    EXPECT_NEAR(job.result.total_ns, 2 * (kCompute + 2 * kAloneComm), 1e-3);
    EXPECT_NEAR(job.result.exposed_comm_ns, 2 * 2 * kAloneComm, 1e-3);  // nothing overlaps the all-reduce
  }
  // The bottleneck A->B (link 8) carried both jobs' 0->2 and 1->3 flows: 2 x 2 x 10 MB, busy 2 x 20 ms.
  EXPECT_NEAR(both.flows.link_bytes[8], 4 * kBytes, 1e-3);
  EXPECT_NEAR(both.flows.link_busy_ns[8], 4 * kAloneComm, 1e-3);
  EXPECT_NEAR(both.makespan_ns, 80e6, 1e-3);
}

// Utilization over time, 10 ms windows, the second job 5 ms later. Link 8 (A->B) carries x's 0->2
// and y's 1->3 flows and moves 1 byte/ns whenever either sends. x's first all-reduce sends alone
// in [20, 25] ms, then both share until x ends at 35 (5 MB left at 0.5 B/ns), y sends its last 5 MB
// alone in [35, 40]: busy [20, 40]. Second iterations: x computes [35, 55], y [40, 60]; x sends 5 MB
// alone in [55, 60], both share [60, 70], y sends its last 5 MB alone in [70, 75]. Windows:
// 0, 0, 10 MB, 10 MB, 0, 5 MB (of [50, 60]), 10 MB, 5 MB (of [70, 80]).
TEST(SharedFabric, LinkBytesPerWindowFollowTheCommunicationPhases) {
  const auto fabric = test_support::dumbbell();
  const auto x = two_npu_job("x", {0, 2}, kCompute, kBytes, 2);
  const auto y = two_npu_job("y", {1, 3}, kCompute, kBytes, 2, 5e6);
  const auto run = sim::jobs::simulate_shared_fabric(fabric, {&x, &y}, 0.0, 10e6);
  EXPECT_DOUBLE_EQ(run.link_window_ns, 10e6);
  const std::vector<double> expect = {0, 0, 10e6, 10e6, 0, 5e6, 10e6, 5e6};
  ASSERT_EQ(run.link_window_bytes.size(), expect.size());
  for (std::size_t i = 0; i < expect.size(); ++i)
    EXPECT_NEAR(run.link_window_bytes[i][8], expect[i], 1e-3) << "window " << i;
  // Every link's windows add up to its bytes over the run.
  for (std::size_t l = 0; l < fabric.links.size(); ++l) {
    double sum = 0;
    for (const auto& w : run.link_window_bytes) sum += w[l];
    EXPECT_NEAR(sum, run.flows.link_bytes[l], 1e-3) << "link " << l;
  }
  // Without a window nothing is recorded.
  EXPECT_TRUE(sim::jobs::simulate_shared_fabric(fabric, {&x, &y}).link_window_bytes.empty());
}

TEST(SharedFabric, ShiftedAllReducesDoNotOverlapAndRunAsFastAsAlone) {
  const auto fabric = test_support::dumbbell();
  // y starts 10 ms later: x communicates in [20, 30] and [50, 60] ms, y in [30, 40] and [60, 70] ms
  // (its computes run [10, 30] and [40, 60]): the phases only touch, so each job runs as alone.
  const auto x = two_npu_job("x", {0, 2}, kCompute, kBytes, 2);
  const auto y = two_npu_job("y", {1, 3}, kCompute, kBytes, 2, 10e6);
  const auto both = sim::jobs::simulate_shared_fabric(fabric, {&x, &y});
  for (const auto& job : both.jobs) {
    EXPECT_NEAR(job.result.total_ns, 2 * (kCompute + kAloneComm), 1e-3);
    EXPECT_NEAR(job.iteration_ns[0], kCompute + kAloneComm, 1e-3);
  }
  EXPECT_NEAR(both.jobs[1].result.nodes.back().end_ns, 70e6, 1e-3);  // absolute times include the offset
  EXPECT_NEAR(both.makespan_ns, 70e6, 1e-3);
  // A shift of 5 ms overlaps half of each all-reduce: x's first one has [20, 25] to itself (5 MB),
  // then shares [25, 35] with y's (5 MB each at 0.5 B/ns), so it ends at 35 ms instead of 30.
  const auto z = two_npu_job("z", {1, 3}, kCompute, kBytes, 2, 5e6);
  const auto half = sim::jobs::simulate_shared_fabric(fabric, {&x, &z});
  EXPECT_NEAR(half.jobs[0].iteration_ns[0], kCompute + 15e6, 1e-3);
}

TEST(SharedFabric, ShiftSearchFindsTheInterleaving) {
  // The two overlapping jobs above: unshifted, each takes 80 ms instead of 60 (slowdown 4/3 each,
  // 8/3 in all). Three shifts of y per 30 ms iteration: 0, 10 and 20 ms; at 10 ms (and at 20 ms)
  // the all-reduces never overlap, both jobs run as alone, total slowdown 2; the first wins.
  const auto fabric = test_support::dumbbell();
  const std::vector<SharedJob> jobs{two_npu_job("x", {0, 2}, kCompute, kBytes, 2),
                                    two_npu_job("y", {1, 3}, kCompute, kBytes, 2)};
  std::vector<sim::jobs::JobTimeline> alone;
  for (const auto& job : jobs) alone.push_back(sim::jobs::simulate_shared_fabric(fabric, {&job}).jobs[0]);
  sim::jobs::ShiftSearchOptions o;
  o.steps = 3;
  const auto r = sim::jobs::search_time_shifts(fabric, jobs, alone, o);
  EXPECT_NEAR(r.unshifted_total_slowdown, 8.0 / 3, 1e-9);
  EXPECT_NEAR(r.unshifted_slowdowns[1], 4.0 / 3, 1e-9);
  EXPECT_EQ(r.shifts_ns, (std::vector<double>{0, 10e6}));
  EXPECT_NEAR(r.total_slowdown, 2.0, 1e-9);
  EXPECT_NEAR(r.slowdowns[0], 1.0, 1e-9);
  // 1 unshifted + 2 shifts in the first round; the second round changes nothing: 2 more, then stop.
  EXPECT_EQ(r.evaluations, 5);
  o.steps = 0;
  EXPECT_THROW(sim::jobs::search_time_shifts(fabric, jobs, alone, o), InputError);
}

TEST(SharedFabric, DisjointJobsRunExactlyAsFastAsAlone) {
  const auto fabric = test_support::dumbbell();
  // x on 0 and 1 (only links to and from A), y on 2 and 3 (only B's): no link in common.
  const auto x = two_npu_job("x", {0, 1}, kCompute, kBytes, 3);
  const auto y = two_npu_job("y", {2, 3}, kCompute / 2, kBytes * 3, 3);
  const auto both = sim::jobs::simulate_shared_fabric(fabric, {&x, &y});
  const auto x_alone = sim::jobs::simulate_shared_fabric(fabric, {&x});
  const auto y_alone = sim::jobs::simulate_shared_fabric(fabric, {&y});
  EXPECT_EQ(both.jobs[0].result.total_ns, x_alone.jobs[0].result.total_ns);
  EXPECT_EQ(both.jobs[1].result.total_ns, y_alone.jobs[0].result.total_ns);
  EXPECT_DOUBLE_EQ(both.jobs[0].result.total_ns, 3 * (kCompute + kAloneComm));          // 3 x (20 + 10) ms
  EXPECT_DOUBLE_EQ(both.jobs[1].result.total_ns, 3 * (kCompute / 2 + 3 * kAloneComm));  // 3 x (10 + 30) ms
}

TEST(SharedFabric, StragglerStretchesEveryComputeOfADataParallelJob) {
  // One NPU at speed 1/4: every compute waits for it, so each iteration is >= 4 x 20 ms, and here,
  // with the 10 ms all-reduce after it, exactly 90 ms.
  auto x = two_npu_job("x", {0, 2}, kCompute, kBytes, 2);
  x.compute_ns = sim::straggler_compute_ns(x.dag, x.logical, x.compute_ns, {1.0, 0.25}, "speeds");
  const auto run = sim::jobs::simulate_shared_fabric(test_support::dumbbell(), {&x});
  EXPECT_GE(run.jobs[0].iteration_ns[0], 4 * kCompute);
  EXPECT_NEAR(run.jobs[0].iteration_ns[0], 4 * kCompute + kAloneComm, 1e-3);
  EXPECT_NEAR(run.jobs[0].result.compute_ns, 2 * 4 * kCompute, 1e-3);
}

TEST(LinkFaults, HalfBandwidthOnTheOnlyPathDoublesTheTransfer) {
  // x's ring crosses A <-> B, its only path; at half bandwidth (0.5 B/ns) each 10 MB flow takes 20 ms.
  const auto x = two_npu_job("x", {0, 2}, kCompute, kBytes, 2);
  const auto slow = net::apply_link_faults(test_support::dumbbell(), {{4, 5, 0.5, "f0"}, {5, 4, 0.5, "f1"}});
  const auto run = sim::jobs::simulate_shared_fabric(slow, {&x});
  EXPECT_NEAR(run.jobs[0].iteration_ns[0], kCompute + 2 * kAloneComm, 1e-3);
  EXPECT_NEAR(run.jobs[0].result.total_ns, 2 * (kCompute + 2 * kAloneComm), 1e-3);
  // Only one direction degraded: the other flow still takes 10 ms, the all-reduce waits for the slower.
  const auto one_way = net::apply_link_faults(test_support::dumbbell(), {{4, 5, 0.5, "f0"}});
  EXPECT_NEAR(sim::jobs::simulate_shared_fabric(one_way, {&x}).jobs[0].iteration_ns[0], kCompute + 2 * kAloneComm,
              1e-3);
}

TEST(LinkFaults, RoutesGoAroundALinkThatIsDown) {
  // A triangle of servers, 1 B/ns and 1 us per link. x on 0 and 1: its ring's flows 0 -> 1 and
  // 1 -> 0 go direct; a pipelined ring of 2 steps ends 2 x the slowest edge's path latency after its
  // last byte: 10 ms + 2 us. With 0 -> 1 down, 0 -> 1 takes 0 -> 2 -> 1 (two hops): 10 ms + 4 us.
  net::GraphNetwork tri;
  tri.name = "tri";
  tri.servers = 3;
  for (auto [a, b] : {std::pair{0, 1}, {1, 2}, {0, 2}}) {
    tri.add_link(a, b, 8.0, 1000.0);
    tri.add_link(b, a, 8.0, 1000.0);
  }
  const auto x = two_npu_job("x", {0, 1}, kCompute, kBytes, 1);
  EXPECT_NEAR(sim::jobs::simulate_shared_fabric(tri, {&x}).jobs[0].result.total_ns, kCompute + kAloneComm + 2000, 1e-3);
  const auto cut = net::apply_link_faults(tri, {{0, 1, 0.0, "f0"}});
  EXPECT_EQ(cut.links.size(), 5u);
  EXPECT_EQ(net::Router(cut).shortest_path(0, 1).size(), 2u);
  EXPECT_NEAR(sim::jobs::simulate_shared_fabric(cut, {&x}).jobs[0].result.total_ns, kCompute + kAloneComm + 4000, 1e-3);
}

TEST(LinkFaults, BadFaultsAreInputErrors) {
  const auto fault = [](std::vector<net::LinkFault> f) {
    return input_error_of([&] { net::apply_link_faults(test_support::dumbbell(), f); });
  };
  const auto e = fault({{4, 5, 0.0, "j.yaml:3: links[0]"}});
  EXPECT_NE(e.find("j.yaml:3: links[0]: with the links down (4 -> 5) server 0 cannot reach server 2"),
            std::string::npos)
      << e;
  EXPECT_NE(fault({{0, 2, 0.5, "f"}}).find("f: fabric 'dumbbell' has no link 0 -> 2"), std::string::npos);
  EXPECT_NE(fault({{0, 4, 1.5, "f"}}).find("must be in [0, 1]"), std::string::npos);
}

sim::jobs::JobsFile parse(const std::string& text) { return sim::jobs::parse_jobs_yaml(text, "j.yaml", "."); }

TEST(SharedFabricPlacement, PoliciesAndExplicitLists) {
  // 2:1 oversubscribed fat-tree of 8 servers, ToRs of 4 (servers 0-3 and 4-7).
  const auto fabric = net::oversubscribed_fat_tree(8, 4, 100.0);
  const auto file = parse(R"(jobs:
  - {name: e, workload: resnet152, placement: [5, 2]}
  - {name: c, workload: resnet152, npus: 2}
  - {name: t, workload: resnet152, npus: 3, placement: topology-aware}
  - {name: r, workload: resnet152, npus: 1, placement: random, seed: 7}
)");
  const auto placed = sim::jobs::place_jobs(file.jobs, fabric);
  EXPECT_EQ(placed[0], (std::vector<int>{5, 2}));  // as listed: NPU 0 on server 5
  EXPECT_EQ(placed[1], (std::vector<int>{0, 1}));  // the lowest free servers
  // Free now: 3, 4, 6, 7. From 3, the others are 4 hops away (ToR, core, ToR); from 4, 6 and 7 are
  // 2 (under the same ToR): t takes 4, 6, 7.
  EXPECT_EQ(placed[2], (std::vector<int>{4, 6, 7}));
  EXPECT_EQ(placed[3], (std::vector<int>{3}));  // the only server left
  // Topology-aware keeps a job under one ToR when it fits: from server 4, servers 5-7 are 2 hops.
  const auto file2 = parse(R"(jobs:
  - {name: a, workload: resnet152, placement: [0, 1, 2]}
  - {name: b, workload: resnet152, npus: 4, placement: topology-aware}
)");
  EXPECT_EQ(sim::jobs::place_jobs(file2.jobs, fabric)[1], (std::vector<int>{4, 5, 6, 7}));
  // (contiguous, from server 3, would cross the core)
  // Random: deterministic for a seed, and distinct servers.
  const auto file3 = parse("jobs:\n  - {name: r, workload: resnet152, npus: 4, placement: random, seed: 3}\n");
  const auto r1 = sim::jobs::place_jobs(file3.jobs, fabric)[0];
  EXPECT_EQ(r1, sim::jobs::place_jobs(file3.jobs, fabric)[0]);
  EXPECT_EQ(r1.size(), 4u);
  EXPECT_TRUE(std::is_sorted(r1.begin(), r1.end()));
  EXPECT_EQ(std::adjacent_find(r1.begin(), r1.end()), r1.end());
}

TEST(SharedFabricPlacement, BadPlacementsNameTheJobAndField) {
  const auto fabric = test_support::dumbbell();
  const auto place = [&](const std::string& text) {
    return input_error_of([&] { sim::jobs::place_jobs(parse(text).jobs, fabric); });
  };
  {
    const auto e = place(
        "jobs:\n  - {name: a, workload: gnmt, placement: [0, 1]}\n  - {name: b, workload: gnmt, placement: [2, 1]}\n");
    EXPECT_NE(e.find("j.yaml:3: job 'b': placement[1]: server 1 is also job 'a''s"), std::string::npos) << e;
  }
  EXPECT_NE(place("jobs:\n  - {name: a, workload: gnmt, placement: [0, 9]}\n")
                .find("job 'a': placement[1]: 9 is not a server"),
            std::string::npos);
  EXPECT_NE(place("jobs:\n  - {name: a, workload: gnmt, npus: 5}\n")
                .find("job 'a': 5 NPUs but fabric 'dumbbell' has 4 servers"),
            std::string::npos);
  EXPECT_NE(place("jobs:\n  - {name: a, workload: gnmt, npus: 3}\n  - {name: b, workload: gnmt, npus: 2}\n")
                .find("job 'b': 2 NPUs but only 1 of"),
            std::string::npos);
  EXPECT_NE(place("jobs:\n  - {name: a, workload: gnmt, placement: [1, 1]}\n").find("server 1 is listed twice"),
            std::string::npos);
}

TEST(SharedFabricSpec, FieldsAndErrors) {
  const auto file = parse(R"(fabric: f.yaml
jobs:
  - name: a
    workload: resnet152
    npus: 4
    start_ms: 2.5
    iterations: 3
    speeds: [1, 1, 0.5, 1]
)");
  EXPECT_EQ(file.fabric, "f.yaml");
  ASSERT_EQ(file.jobs.size(), 1u);
  EXPECT_EQ(file.jobs[0].npus, 4);
  EXPECT_DOUBLE_EQ(file.jobs[0].start_ns, 2.5e6);
  EXPECT_EQ(file.jobs[0].iterations, 3);
  EXPECT_EQ(file.jobs[0].policy, sim::jobs::PlacementPolicy::kContiguous);
  EXPECT_EQ(file.jobs[0].speeds, (std::vector<double>{1, 1, 0.5, 1}));
  // Drawn speeds: in [min, max], the same for the same seed, another draw for another seed.
  const auto drawn = [](int seed) {
    return parse(fmt::format(
                     "jobs:\n  - {{name: a, workload: gnmt, npus: 64, speeds: {{min: 0.5, max: 0.9, seed: {}}}}}\n",
                     seed))
        .jobs[0]
        .speeds;
  };
  const auto d1 = drawn(1);
  ASSERT_EQ(d1.size(), 64u);
  EXPECT_GE(*std::min_element(d1.begin(), d1.end()), 0.5);
  EXPECT_LE(*std::max_element(d1.begin(), d1.end()), 0.9);
  EXPECT_LT(*std::min_element(d1.begin(), d1.end()), 0.6);  // none of 64 below 0.6: probability 0.75^64
  EXPECT_EQ(d1, drawn(1));
  EXPECT_NE(d1, drawn(2));
  const auto err = [](const std::string& text) { return input_error_of([&] { parse(text); }); };
  const auto e1 = err("jobs:\n  - name: a\n    workload: gnmt\n    npu: 2\n");
  EXPECT_NE(e1.find("j.yaml:4: job 'a': unknown key 'npu' (did you mean 'npus'?)"), std::string::npos) << e1;
  const auto e2 = err("jobs:\n  - name: a\n    workload: gnmt\n    npus: two\n");
  EXPECT_NE(e2.find("j.yaml:4: job 'a': field 'jobs[0].npus' must be an integer"), std::string::npos) << e2;
  EXPECT_NE(err("jobs:\n  - {name: a, workload: gnmt, npus: 0}\n").find("'jobs[0].npus' must be in 1.."),
            std::string::npos);
  EXPECT_NE(err("jobs:\n  - {name: a, workload: gnmt, npus: 2, start_ms: -1}\n")
                .find("'jobs[0].start_ms' must be a finite number >= 0"),
            std::string::npos);
  EXPECT_NE(
      err("jobs:\n  - {name: a, workload: gnmt, npus: 2, placement: contigous}\n").find("did you mean 'contiguous'?"),
      std::string::npos);
  EXPECT_NE(err("jobs:\n  - {name: a, workload: gnmt, npus: 2, speeds: [1]}\n").find("lists 1 speeds for 2 NPUs"),
            std::string::npos);
  EXPECT_NE(err("jobs:\n  - {name: a, workload: gnmt, npus: 2}\n  - {name: a, workload: gnmt, npus: 2}\n")
                .find("another job has this name"),
            std::string::npos);
  EXPECT_NE(err("jobs:\n  - {name: a, workload: gnmt, npus: 2, speeds: {min: 0}}\n").find("0 < min <= max"),
            std::string::npos);
  EXPECT_NE(
      err("jobs:\n  - {name: a, workload: gnmt, npus: 2, speeds: {min: 0.5, sed: 1}}\n").find("did you mean 'seed'?"),
      std::string::npos);
  const auto faults = parse(
                          "links:\n  - {from: 4, to: 5, down: true}\n  - {from: 5, to: 4, bandwidth_fraction: 0.25}\n"
                          "jobs:\n  - {name: a, workload: gnmt, npus: 2}\n")
                          .link_faults;
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_EQ(faults[0].bandwidth_fraction, 0.0);
  EXPECT_EQ(faults[1].bandwidth_fraction, 0.25);
  EXPECT_EQ(faults[1].where, "j.yaml:3: links[1]");
  EXPECT_NE(err("links:\n  - {from: 4, to: 5, bandwidth_fraction: 0}\njobs: []\n")
                .find("'links[0].bandwidth_fraction' must be in (0, 1]"),
            std::string::npos);
  EXPECT_NE(err("links:\n  - {from: 4, to: 5}\njobs: []\n").find("needs one of 'bandwidth_fraction' and 'down'"),
            std::string::npos);
  EXPECT_NE(err("jbos: []\n").find("unknown key 'jbos' (did you mean 'jobs'?)"), std::string::npos);
}

// The multi-dimensional presets as graphs (net::graph_of). One dimension of P = 4 NPUs, 1 byte/ns of
// aggregate bandwidth per NPU, no latency; an all-reduce of S = 4000 bytes in one chunk.
// Analytically (sim collective): RS sends 3/4 S = 3000 bytes, AG 3 x S/4 = 3000: 6000 ns for every
// kind. The flow model runs a ring in NPU order: every NPU sends 2 (P - 1)/P S = 6000 bytes to the next.
//  - switch: each NPU's own 1 B/ns links to and from the switch carry its 6000 bytes: 6000 ns, agreed;
//  - ring (2 links of 4 Gb/s): 0.5 B/ns each way, the all-reduce split over both ring orders, 3000
//    bytes per edge per direction: 6000 ns, agreed;
//  - fully connected (3 links of 8/3 Gb/s): the ring uses one of an NPU's three links, 1/3 B/ns:
//    18000 ns, 3 = P - 1 times the direct algorithm's (which uses all three): they disagree.
TEST(GraphOfNetwork, OneAllReduceAgreesWithTheAnalyticalModelOnSwitchAndRing) {
  struct Case {
    net::DimKind kind;
    double link_gbps;
    int links;
    double flow_ns;
    int switches;
    std::size_t links_total;
  };
  const Case cases[] = {{net::DimKind::kSwitch, 8.0, 1, 6000, 1, 8},
                        {net::DimKind::kRing, 4.0, 2, 6000, 0, 8},
                        {net::DimKind::kFullyConnected, 8.0 / 3, 3, 18000, 0, 12}};
  for (const auto& c : cases) {
    const net::Network network{"one-dim", {net::Dimension{c.kind, 4, c.link_gbps, c.links, 0.0}}};
    const auto analytical =
        sim::run_collective(network, sim::make_request(CollectiveKind::kAllReduce, 4000, 1, "baseline"));
    EXPECT_NEAR(analytical.result.time_ns, 6000, 1e-6) << net::to_string(c.kind);
    const auto g = net::graph_of(network, "test");
    EXPECT_EQ(g.servers, 4);
    EXPECT_EQ(g.switches, c.switches);
    EXPECT_EQ(g.links.size(), c.links_total) << net::to_string(c.kind);
    const auto job = two_npu_job("j", {0, 1, 2, 3}, 0, 4000, 1);
    const auto run = sim::jobs::simulate_shared_fabric(g, {&job});
    EXPECT_NEAR(run.jobs[0].result.total_ns, c.flow_ns, 1e-6) << net::to_string(c.kind);
  }
}

// A 2 x 4 network (a ring of 2, then a switch of 4): servers 0-7, two switch nodes 8 (NPUs 0, 2, 4, 6)
// and 9 (1, 3, 5, 7); the ring pairs (0, 1), (2, 3), ... by one link each way.
TEST(GraphOfNetwork, GroupsFollowTheDimensionOrder) {
  const net::Network network{
      "2x4",
      {net::Dimension{net::DimKind::kRing, 2, 100, 2, 20}, net::Dimension{net::DimKind::kSwitch, 4, 50, 1, 700}}};
  const auto g = net::graph_of(network, "test");
  EXPECT_EQ(g.servers, 8);
  EXPECT_EQ(g.switches, 2);
  ASSERT_EQ(g.links.size(), 4u * 2 + 8u * 2);
  EXPECT_EQ(g.links[0].from, 0);
  EXPECT_EQ(g.links[0].to, 1);
  EXPECT_DOUBLE_EQ(g.links[0].gbps, 200);  // a ring of 2: the whole aggregate one way
  EXPECT_DOUBLE_EQ(g.links[0].latency_ns, 20);
  EXPECT_EQ(g.links[8].from, 0);
  EXPECT_EQ(g.links[8].to, 8);
  EXPECT_EQ(g.links[10].from, 2);
  EXPECT_EQ(g.links[10].to, 8);
  EXPECT_EQ(g.links[16].from, 1);
  EXPECT_EQ(g.links[16].to, 9);
  EXPECT_DOUBLE_EQ(g.links[16].gbps, 50);
  EXPECT_DOUBLE_EQ(g.links[16].latency_ns, 350);  // half the step latency per hop
  EXPECT_TRUE(g.rings.empty());
  // The Themis presets map (1,024 servers each).
  for (const auto& p : net::table2_presets()) EXPECT_EQ(net::graph_of(p, p.name).servers, 1024) << p.name;
}

}  // namespace
}  // namespace chorus
