// Several jobs on one graph fabric (sim/jobs, docs/shared-fabric.md). Every expected time is
// worked out by hand in the comments. Units: 8 Gbit/s links carry 1 byte/ns; latencies are 0 so
// that a flow of b bytes alone on a path takes exactly b ns.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "core/error.h"
#include "net/graph/fabrics.h"
#include "sim/jobs/job_mix.h"
#include "sim/jobs/job_spec.h"
#include "sim/jobs/placement.h"
#include "sim/jobs/shared_fabric.h"

namespace chorus {
namespace {

using sim::jobs::SharedJob;

// A dumbbell: servers 0, 1 under switch 4 (A), servers 2, 3 under switch 5 (B), every link 8 Gb/s
// both ways and A <-> B the only way between the two halves.
net::GraphNetwork dumbbell() {
  net::GraphNetwork g;
  g.name = "dumbbell";
  g.servers = 4;
  g.switches = 2;
  for (auto [s, sw] : {std::pair{0, 4}, {1, 4}, {2, 5}, {3, 5}}) {
    g.add_link(s, sw, 8.0, 0.0);
    g.add_link(sw, s, 8.0, 0.0);
  }
  g.add_link(4, 5, 8.0, 0.0);
  g.add_link(5, 4, 8.0, 0.0);
  return g;
}

// One data-parallel job of two NPUs: per iteration a compute of `compute_ns`, then an all-reduce of
// `bytes` over both NPUs; the next iteration's compute waits for it.
SharedJob two_npu_job(const std::string& name, std::vector<int> servers, double compute_ns, double bytes, int iterations,
                      double start_ns = 0) {
  SharedJob job;
  job.name = name;
  job.logical.name = "logical";
  job.logical.dims.push_back(net::Dimension{net::DimKind::kRing, 2, 100.0, 1, 0.0});
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
  for (const auto& n : job.dag.nodes) job.compute_ns.push_back(n.kind == workload::NodeKind::kCompute ? n.duration_ns : 0.0);
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
  const auto fabric = dumbbell();
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

TEST(SharedFabric, ShiftedAllReducesDoNotOverlapAndRunAsFastAsAlone) {
  const auto fabric = dumbbell();
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

TEST(SharedFabric, DisjointJobsRunExactlyAsFastAsAlone) {
  const auto fabric = dumbbell();
  // x on 0 and 1 (only links to and from A), y on 2 and 3 (only B's): no link in common.
  const auto x = two_npu_job("x", {0, 1}, kCompute, kBytes, 3);
  const auto y = two_npu_job("y", {2, 3}, kCompute / 2, kBytes * 3, 3);
  const auto both = sim::jobs::simulate_shared_fabric(fabric, {&x, &y});
  const auto x_alone = sim::jobs::simulate_shared_fabric(fabric, {&x});
  const auto y_alone = sim::jobs::simulate_shared_fabric(fabric, {&y});
  EXPECT_EQ(both.jobs[0].result.total_ns, x_alone.jobs[0].result.total_ns);
  EXPECT_EQ(both.jobs[1].result.total_ns, y_alone.jobs[0].result.total_ns);
  EXPECT_DOUBLE_EQ(both.jobs[0].result.total_ns, 3 * (kCompute + kAloneComm));  // 3 x (20 + 10) ms
  EXPECT_DOUBLE_EQ(both.jobs[1].result.total_ns, 3 * (kCompute / 2 + 3 * kAloneComm));  // 3 x (10 + 30) ms
}

TEST(SharedFabric, StragglerStretchesEveryComputeOfADataParallelJob) {
  // One NPU at speed 1/4: every compute waits for it, so each iteration is >= 4 x 20 ms, and here,
  // with the 10 ms all-reduce after it, exactly 90 ms.
  auto x = two_npu_job("x", {0, 2}, kCompute, kBytes, 2);
  x.compute_ns = sim::jobs::straggler_compute_ns(x.compute_ns, {1.0, 0.25});
  const auto run = sim::jobs::simulate_shared_fabric(dumbbell(), {&x});
  EXPECT_GE(run.jobs[0].iteration_ns[0], 4 * kCompute);
  EXPECT_NEAR(run.jobs[0].iteration_ns[0], 4 * kCompute + kAloneComm, 1e-3);
  EXPECT_NEAR(run.jobs[0].result.compute_ns, 2 * 4 * kCompute, 1e-3);
}

sim::jobs::JobsFile parse(const std::string& text) { return sim::jobs::parse_jobs_yaml(text, "j.yaml", "."); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

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
  const auto fabric = dumbbell();
  const auto place = [&](const std::string& text) { return error_of([&] { sim::jobs::place_jobs(parse(text).jobs, fabric); }); };
  {
    const auto e = place("jobs:\n  - {name: a, workload: gnmt, placement: [0, 1]}\n  - {name: b, workload: gnmt, placement: [2, 1]}\n");
    EXPECT_NE(e.find("j.yaml:3: job 'b': placement[1]: server 1 is also job 'a''s"), std::string::npos) << e;
  }
  EXPECT_NE(place("jobs:\n  - {name: a, workload: gnmt, placement: [0, 9]}\n").find("job 'a': placement[1]: 9 is not a server"),
            std::string::npos);
  EXPECT_NE(place("jobs:\n  - {name: a, workload: gnmt, npus: 5}\n").find("job 'a': 5 NPUs but fabric 'dumbbell' has 4 servers"),
            std::string::npos);
  EXPECT_NE(place("jobs:\n  - {name: a, workload: gnmt, npus: 3}\n  - {name: b, workload: gnmt, npus: 2}\n")
                .find("job 'b': 2 NPUs but only 1 of"),
            std::string::npos);
  EXPECT_NE(place("jobs:\n  - {name: a, workload: gnmt, placement: [1, 1]}\n").find("server 1 is listed twice"), std::string::npos);
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
  const auto err = [](const std::string& text) { return error_of([&] { parse(text); }); };
  const auto e1 = err("jobs:\n  - name: a\n    workload: gnmt\n    npu: 2\n");
  EXPECT_NE(e1.find("j.yaml:4: job 'a': unknown key 'npu' (did you mean 'npus'?)"), std::string::npos) << e1;
  const auto e2 = err("jobs:\n  - name: a\n    workload: gnmt\n    npus: two\n");
  EXPECT_NE(e2.find("j.yaml:4: job 'a': field 'jobs[0].npus' must be an integer"), std::string::npos) << e2;
  EXPECT_NE(err("jobs:\n  - {name: a, workload: gnmt, npus: 0}\n").find("'jobs[0].npus' must be in 1.."), std::string::npos);
  EXPECT_NE(err("jobs:\n  - {name: a, workload: gnmt, npus: 2, start_ms: -1}\n").find("'jobs[0].start_ms' must be a finite number >= 0"),
            std::string::npos);
  EXPECT_NE(err("jobs:\n  - {name: a, workload: gnmt, npus: 2, placement: contigous}\n").find("did you mean 'contiguous'?"),
            std::string::npos);
  EXPECT_NE(err("jobs:\n  - {name: a, workload: gnmt, npus: 2, speeds: [1]}\n").find("lists 1 speeds for 2 NPUs"), std::string::npos);
  EXPECT_NE(err("jobs:\n  - {name: a, workload: gnmt, npus: 2}\n  - {name: a, workload: gnmt, npus: 2}\n").find("another job has this name"),
            std::string::npos);
  EXPECT_NE(err("jbos: []\n").find("unknown key 'jbos' (did you mean 'jobs'?)"), std::string::npos);
}

}  // namespace
}  // namespace chorus
