// `chorus sim jobs` beyond zoo models (docs/shared-fabric.md): a job's workload may be any spec
// workload::load reads, the fabric a dimension network's graph, and links may fail or degrade
// during the run. Every expected time is worked out by hand in the comments. Units: 8 Gbit/s
// links carry 1 byte/ns; latencies are 0, so a flow of b bytes alone on a path takes b ns.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "dumbbell_fabric.h"
#include "net/graph/from_network.h"
#include "net/network_yaml.h"
#include "sim/jobs/job_mix.h"
#include "sim/jobs/job_spec.h"
#include "sim/jobs/timed_link_faults.h"
#include "workload/load.h"

namespace chorus {
namespace {

// One layer of ASTRA-sim's DATA format: forward 2,000,000 cycles, no input gradient, weight
// gradient 3,000,000 cycles, then an all-reduce of 10 MB, no update. At 1 ns per cycle an
// iteration computes 2 + 3 = 5 ms and then all-reduces; the next forward waits for it (the
// update after the all-reduce, 0 cycles). On two NPUs the all-reduce is a ring of two: one flow
// of 10 MB each way, 10 ms alone on 1 byte/ns links.
constexpr const char* kAstraOneAllReduce = "DATA\n1\nl0 -1 2000000 NONE 0 0 NONE 0 3000000 ALLREDUCE 10000000 0\n";

class JobsWorkloads : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("chorus_jobs_workloads_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
    write("one_allreduce.txt", kAstraOneAllReduce);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir_ / name) << text; }
  sim::jobs::JobsFile parse(const std::string& text) const {
    return sim::jobs::parse_jobs_yaml(text, "jobs.yaml", dir_.string());
  }
  std::filesystem::path dir_;
};

TEST_F(JobsWorkloads, LoadFindsEachFormatOnce) {
  const auto one_dim = net::parse_network_yaml(
      "dims:\n  - {kind: ring, size: 2, link_bandwidth_gbps: 8, links_per_npu: 1, latency_ns: 0}\n", "two.yaml");
  const auto astra = (dir_ / "one_allreduce.txt").string();
  EXPECT_EQ(workload::format_of(astra), workload::WorkloadFormat::kAstraText);
  const auto loaded = workload::load(astra, one_dim, {});
  EXPECT_EQ(loaded.format, workload::WorkloadFormat::kAstraText);
  EXPECT_FALSE(loaded.model.has_value());
  // fwd, ig, wg computes, the all-reduce and the update: the one all-reduce is 10 MB over dimension 0.
  int comm = 0;
  for (const auto& n : loaded.dag.nodes)
    if (n.kind == workload::NodeKind::kComm) {
      ++comm;
      EXPECT_EQ(n.bytes, 10e6);
      EXPECT_EQ(n.dims, std::vector<int>{0});
    }
  EXPECT_EQ(comm, 1);
  const auto zoo = workload::load("gnmt", one_dim, {});
  EXPECT_EQ(zoo.format, workload::WorkloadFormat::kModel);
  ASSERT_TRUE(zoo.model.has_value());
  EXPECT_TRUE(zoo.dag.nodes.empty());  // a model's DAG is built on the caller's network
  // The Chakra samples: a prefix, a directory, a rank's file; the directory of two traces is ambiguous.
  const std::string chakra = std::string(CHORUS_TEST_DATA_DIR) + "/chakra";
  EXPECT_EQ(workload::format_of(chakra + "/dp_step"), workload::WorkloadFormat::kChakra);
  EXPECT_EQ(workload::format_of(chakra + "/dp_step.1.et"), workload::WorkloadFormat::kChakra);
  std::filesystem::create_directories(dir_ / "trace");
  std::filesystem::copy_file(chakra + "/dp_step.0.et", dir_ / "trace" / "dp_step.0.et");
  std::filesystem::copy_file(chakra + "/dp_step.1.et", dir_ / "trace" / "dp_step.1.et");
  const auto from_dir = workload::load((dir_ / "trace").string(), one_dim, {});
  EXPECT_EQ(from_dir.format, workload::WorkloadFormat::kChakra);
  EXPECT_EQ(from_dir.file, (dir_ / "trace" / "dp_step.0.et").string());
  try {
    workload::load(chakra, one_dim, {});
    FAIL() << "two traces in one directory";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), chakra);
    EXPECT_NE(e.detail().find("dp_step, p2p_step"), std::string::npos) << e.what();
  }
  // Neither: the caller's field, and no command-line flag.
  try {
    workload::load("resnet153", one_dim, {}, "jobs[0].workload");
    FAIL() << "no such workload";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "jobs[0].workload");
    EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
  }
  EXPECT_EQ(workload::format_of(std::string(CHORUS_TEST_DATA_DIR) + "/pytorch_eg/ddp.0.json"),
            workload::WorkloadFormat::kExecutionGraph);
  // In a jobs file, a Chakra prefix is relative to the file's directory like any path.
  EXPECT_EQ(parse("jobs:\n  - {workload: trace/dp_step, npus: 2}\n").jobs[0].workload,
            (dir_ / "trace" / "dp_step").string());
}

// Two jobs run the ASTRA-sim file above, x on servers 0 and 2, y on 1 and 3, two iterations each.
// Alone: per iteration 5 ms of compute and 10 ms of all-reduce: 2 x 15 = 30 ms. Together both
// rings cross 4 -> 5 and 5 -> 4 from 5 ms on, at half the rate each: the all-reduces take 20 ms,
// iterations of 25 ms, 50 ms in all: slowdown 50 / 30 = 5/3.
TEST_F(JobsWorkloads, AstraTextWorkloadSharesTheFabric) {
  const auto file = parse(
      "jobs:\n"
      "  - {name: x, workload: one_allreduce.txt, placement: [0, 2], iterations: 2}\n"
      "  - {name: y, workload: one_allreduce.txt, placement: [1, 3], iterations: 2}\n");
  const auto mix = sim::jobs::make_job_mix(file, test_support::dumbbell());
  ASSERT_EQ(mix.jobs.size(), 2u);
  EXPECT_EQ(mix.jobs[0].logical.num_npus(), 2u);  // one dimension of the job's NPUs
  const auto r = sim::jobs::run_job_mix(mix);
  for (int j = 0; j < 2; ++j) {
    EXPECT_NEAR(r.alone[j].result.total_ns, 30e6, 1e-3);
    EXPECT_NEAR(r.together.jobs[j].result.total_ns, 50e6, 1e-3);
    EXPECT_NEAR(r.together.jobs[j].iteration_ns[0], 25e6, 1e-3);
    EXPECT_NEAR(r.together.jobs[j].iteration_ns[1], 25e6, 1e-3);
  }
  // ns_per_cycle 2: computes of 4 + 6 ms, the all-reduce still 10 ms alone: 20 ms per iteration.
  const auto slow =
      parse("jobs:\n  - {name: x, workload: one_allreduce.txt, placement: [0, 2], iterations: 1, ns_per_cycle: 2}\n");
  EXPECT_NEAR(sim::jobs::run_job_mix(sim::jobs::make_job_mix(slow, test_support::dumbbell())).alone[0].result.total_ns,
              20e6, 1e-3);
}

// The job's own dimension network: two dimensions of 2 (4 NPUs), the all-reduce over both (DATA
// uses every dimension). Its collective runs over all four of the job's servers on the fabric.
// Placed on 0, 1, 2, 3 the ring 0 -> 1 -> 2 -> 3 -> 0 is pipelined: each edge's flow carries
// 2(n-1)/n x 10 MB = 15 MB (n = 4). The edges 1 -> 2 and 3 -> 0 cross 4 -> 5 and 5 -> 4, one each,
// and no link carries two flows: 15 ms at 1 byte/ns. An iteration: 5 + 15 = 20 ms.
TEST_F(JobsWorkloads, AJobsOwnNetworkGivesItsDimensions) {
  write("two_by_two.yaml",
        "dims:\n  - {kind: ring, size: 2, link_bandwidth_gbps: 8, links_per_npu: 1, latency_ns: 0}\n"
        "  - {kind: ring, size: 2, link_bandwidth_gbps: 8, links_per_npu: 1, latency_ns: 0}\n");
  const auto file =
      parse("jobs:\n  - {name: x, workload: one_allreduce.txt, network: two_by_two.yaml, npus: 4, iterations: 1}\n");
  const auto mix = sim::jobs::make_job_mix(file, test_support::dumbbell());
  EXPECT_EQ(mix.jobs[0].logical.num_dims(), 2);
  EXPECT_NEAR(sim::jobs::run_job_mix(mix).alone[0].result.total_ns, 20e6, 1e-3);
  // A network of another size, or on a model: errors naming the file:line of the field.
  for (const auto& [jobs, message] :
       {std::pair<std::string, std::string>{
            "  - {name: x, workload: one_allreduce.txt, network: two_by_two.yaml, npus: 2}\n",
            "jobs.yaml:2: job 'x': field 'network': '"},
        {"  - {name: x, workload: gnmt, network: two_by_two.yaml, npus: 4}\n",
         "jobs.yaml:2: job 'x': field 'network' applies to ASTRA-sim, Chakra and execution-graph workloads"}}) {
    try {
      sim::jobs::make_job_mix(parse("jobs:\n" + jobs), test_support::dumbbell());
      FAIL() << jobs;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

// A dimension network as the fabric (net::graph_of): one ring of 4 NPUs at 8 Gb/s per NPU
// (links_per_npu 2 at 4 Gb/s): links to the next and the previous NPU at 4 Gb/s = 0.5 byte/ns
// each. A job on NPUs 0 and 1: its ring of two sends 10 MB on 0 -> 1 and 10 MB on 1 -> 0, each
// alone on its link: 20 ms. An iteration: 5 + 20 = 25 ms.
TEST_F(JobsWorkloads, ANetworkYamlRunsAsAFabric) {
  const auto ring = net::parse_network_yaml(
      "dims:\n  - {kind: ring, size: 4, link_bandwidth_gbps: 4, links_per_npu: 2, latency_ns: 0}\n", "ring4.yaml");
  const auto fabric = net::graph_of(ring, "ring4.yaml");
  const auto file = parse("jobs:\n  - {name: x, workload: one_allreduce.txt, placement: [0, 1], iterations: 1}\n");
  EXPECT_NEAR(sim::jobs::run_job_mix(sim::jobs::make_job_mix(file, fabric)).alone[0].result.total_ns, 25e6, 1e-3);
}

// Faults during the run, on job x alone (servers 0 and 2; its flow 0 -> 2 crosses 4 -> 5, the
// flow 2 -> 0 crosses 5 -> 4). The all-reduce starts at 5 ms; 2 -> 0 always ends at 15 ms.
//  - 4 -> 5 at half bandwidth in [7, 11] ms: 0 -> 2 sends 2 MB in [5, 7], 2 MB in [7, 11], the
//    last 6 MB in [11, 17]: the iteration ends at 17 ms;
//  - 4 -> 5 down in [7, 11] ms: 2 MB, then it waits, then 8 MB in [11, 19]: 19 ms (no reroute);
//  - half from 1 ms on, never back: the flow runs at 0.5 byte/ns all along: 5 + 20 = 25 ms;
//  - half in [1, 3] ms, before any flow: as healthy, 15 ms.
TEST_F(JobsWorkloads, LinkFaultsDuringTheRunReRateTheFlows) {
  const auto run = [&](const std::string& links) {
    const auto file = parse("links:\n" + links +
                            "jobs:\n  - {name: x, workload: one_allreduce.txt, placement: [0, 2], iterations: 1}\n");
    EXPECT_EQ(file.link_faults.size(), 0u);
    return sim::jobs::run_job_mix(sim::jobs::make_job_mix(file, test_support::dumbbell())).alone[0].result.total_ns;
  };
  EXPECT_NEAR(run("  - {from: 4, to: 5, bandwidth_fraction: 0.5, at_ms: 7, until_ms: 11}\n"), 17e6, 1e-3);
  EXPECT_NEAR(run("  - {from: 4, to: 5, down: true, at_ms: 7, until_ms: 11}\n"), 19e6, 1e-3);
  EXPECT_NEAR(run("  - {from: 4, to: 5, bandwidth_fraction: 0.5, at_ms: 1}\n"), 25e6, 1e-3);
  EXPECT_NEAR(run("  - {from: 4, to: 5, bandwidth_fraction: 0.5, at_ms: 1, until_ms: 3}\n"), 15e6, 1e-3);
  // Two overlapping faults on one link multiply: half in [7, 11] and half again in [9, 11]: 1 MB
  // in [7, 9] at 0.5, 0.5 MB in [9, 11] at 0.25, 6.5 MB from 11 ms: 17.5 ms.
  EXPECT_NEAR(run("  - {from: 4, to: 5, bandwidth_fraction: 0.5, at_ms: 7, until_ms: 11}\n"
                  "  - {from: 4, to: 5, bandwidth_fraction: 0.5, at_ms: 9, until_ms: 11}\n"),
              17.5e6, 1e-3);
}

// Rerouting: servers 0, 1, 2 linked both ways, every pair at 8 Gb/s, no latency; job x on 0 and 1.
//  - 0 -> 1 down in [1, 30] ms, before the all-reduce starts at 5 ms: its flow 0 -> 1 takes
//    0 -> 2 -> 1, alone there, 10 ms: the iteration ends at 15 ms (without the detour: 40 ms);
//  - 0 -> 1 down in [7, 11] ms, while the flow is on it: 2 MB sent by 7 ms, the other 8 MB go
//    0 -> 2 -> 1 at 1 byte/ns: 15 ms again (waiting for the link instead: 19 ms);
//  - the same with 1 us per link: a pipelined ring's flow completes `steps` x the slowest edge's
//    path latency after its last byte (traffic.h: delay_ns = 2 x 1 us - its own 1 us path
//    latency, fixed when it starts): healthy, 15 ms + 2 us. Rerouted, its own path latency is the
//    two hops' 2 us, plus the 1 us delay: 15 ms + 3 us (1 -> 0 ends at 15 ms + 2 us).
TEST_F(JobsWorkloads, FlowsOnALinkThatGoesDownOrStartingWhileItIsDownGoAroundIt) {
  net::GraphNetwork triangle;
  triangle.name = "triangle";
  triangle.servers = 3;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      if (a != b) triangle.add_link(a, b, 8.0, 0.0);
  const auto run = [&](const std::string& window) {
    const auto file = parse("links:\n  - {from: 0, to: 1, down: true, " + window +
                            "}\njobs:\n  - {name: x, workload: one_allreduce.txt, placement: [0, 1], iterations: 1}\n");
    return sim::jobs::run_job_mix(sim::jobs::make_job_mix(file, triangle)).alone[0].result.total_ns;
  };
  EXPECT_NEAR(run("at_ms: 1, until_ms: 30"), 15e6, 1e-3);
  EXPECT_NEAR(run("at_ms: 7, until_ms: 11"), 15e6, 1e-3);
  for (auto& link : triangle.links) link.latency_ns = 1000;
  EXPECT_NEAR(run("at_ms: 100, until_ms: 200"), 15e6 + 2000, 1e-3);  // after the run: healthy
  EXPECT_NEAR(run("at_ms: 7, until_ms: 11"), 15e6 + 3000, 1e-3);
}

TEST_F(JobsWorkloads, BadTimedFaultsNameTheFileLineAndField) {
  const std::string job = "jobs:\n  - {name: x, workload: one_allreduce.txt, placement: [0, 2]}\n";
  for (const auto& [links, message] : std::vector<std::pair<std::string, std::string>>{
           {"  - {from: 4, to: 5, down: true, at_ms: 7, until_ms: 3}\n",
            "jobs.yaml:2: field 'links[0].until_ms' (3) must be after 'links[0].at_ms' (7)"},
           {"  - {from: 4, to: 5, down: true, at_ms: -1, until_ms: 3}\n",
            "jobs.yaml:2: field 'links[0].at_ms' must be a finite number >= 0"},
           {"  - {from: 4, to: 5, down: true, until_ms: 3}\n", "jobs.yaml:2: field 'links[0].until_ms' needs 'at_ms'"},
           {"  - {from: 4, to: 5, down: true, at_ms: 3}\n",
            "jobs.yaml:2: field 'links[0]': a link down from 'at_ms' needs 'until_ms'"},
       }) {
    try {
      parse("links:\n" + links + job);
      FAIL() << links;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  // A node the fabric lacks: found when the fabric is known.
  try {
    sim::jobs::make_job_mix(parse("links:\n  - {from: 4, to: 9, bandwidth_fraction: 0.5, at_ms: 1}\n" + job),
                            test_support::dumbbell());
    FAIL() << "no link 4 -> 9";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where(), "jobs.yaml:2: links[0]");
    EXPECT_NE(e.detail().find("no link 4 -> 9 (nodes 0..5)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace chorus
