// Invariants of the simulator on random networks (seeded, deterministic).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "coll/stage_cost.h"
#include "core/rng.h"
#include "sim/result_json.h"
#include "sim/run_collective.h"

namespace chorus {
namespace {

net::Network random_network(Rng& rng) {
  net::Network n;
  n.name = "random";
  const int d = static_cast<int>(rng.uniform_int(1, 6));
  for (int k = 0; k < d; ++k) {
    net::Dimension dim;
    dim.kind = static_cast<net::DimKind>(rng.uniform_int(0, 2));
    dim.size = dim.kind == net::DimKind::kSwitch ? 1 << rng.uniform_int(1, 4) : static_cast<int>(rng.uniform_int(2, 9));
    dim.link_bandwidth_gbps = rng.uniform(25, 1600);
    dim.links_per_npu = static_cast<int>(rng.uniform_int(1, 8));
    dim.latency_ns = rng.uniform_int(0, 3) == 0 ? 0.0 : rng.uniform(10, 2000);
    n.dims.push_back(dim);
  }
  return n;
}

sim::CollectiveRun run(const net::Network& n, CollectiveKind op, double size, int chunks, const std::string& s) {
  const auto req = sim::make_request(op, size, chunks, s);
  sim::SimOptions options;
  options.record_stages = true;
  return sim::run_collective(n, req, options);
}

double total_bytes(const sim::CollectiveResult& r) {
  double t = 0;
  for (const auto& d : r.dims) t += d.bytes_per_npu;
  return t;
}

TEST(SimProperties, InvariantsOnRandomNetworks) {
  Rng rng(20221118);
  const std::vector<std::string> schedulers = {"baseline", "themis-fifo", "themis-scf"};
  for (int trial = 0; trial < 150; ++trial) {
    const auto n = random_network(rng);
    const auto op = coll::kThemisCollectives[rng.uniform_int(0, 3)];
    const double size = static_cast<double>(rng.uniform_int(1, 1000)) * 1e6;
    const int chunks = static_cast<int>(rng.uniform_int(1, 96));
    SCOPED_TRACE(testing::Message() << "trial " << trial << " shape " << n.shape() << " op " << compact_name(op)
                                    << " chunks " << chunks);
    const double p = static_cast<double>(n.num_npus());
    double reference_total = -1;
    for (const auto& s : schedulers) {
      const auto r = run(n, op, size, chunks, s);
      // Time never beats the ideal bound.
      EXPECT_GE(r.result.time_ns, r.result.ideal_time_ns * (1 - 1e-9)) << s;
      EXPECT_LE(r.result.avg_bw_utilization, 1 + 1e-9);
      // Bytes per NPU do not depend on the schedule; for RS/AG/AR they telescope to (P-1)/P S per phase.
      const double total = total_bytes(r.result);
      if (reference_total < 0) reference_total = total;
      EXPECT_NEAR(total, reference_total, 1e-6 * reference_total) << s;
      if (op == CollectiveKind::kAllReduce) {
        EXPECT_NEAR(total, 2 * (p - 1) / p * size, 1e-6 * size);
      }
      if (op == CollectiveKind::kReduceScatter || op == CollectiveKind::kAllGather) {
        EXPECT_NEAR(total, (p - 1) / p * size, 1e-6 * size);
      }
      // Every chunk visits every dimension exactly once per phase.
      for (const auto& c : r.schedule.chunks) {
        for (auto phase : {coll::Phase::kReduceScatter, coll::Phase::kAllGather, coll::Phase::kAllToAll}) {
          auto order = c.order(phase);
          const bool used = (phase == coll::Phase::kAllToAll) == (op == CollectiveKind::kAllToAll) &&
                            (phase != coll::Phase::kReduceScatter || op == CollectiveKind::kAllReduce ||
                             op == CollectiveKind::kReduceScatter) &&
                            (phase != coll::Phase::kAllGather || op == CollectiveKind::kAllReduce ||
                             op == CollectiveKind::kAllGather);
          if (!used) {
            EXPECT_TRUE(order.empty());
            continue;
          }
          std::sort(order.begin(), order.end());
          ASSERT_EQ(order.size(), n.dims.size());
          for (size_t k = 0; k < order.size(); ++k) EXPECT_EQ(order[k], static_cast<int>(k));
        }
      }
      // A dimension's bandwidth serves one chunk at a time; stages of a chunk run in order.
      std::map<int, std::vector<std::pair<double, double>>> per_dim;
      std::map<int, double> chunk_end;
      auto stages = r.result.stages;
      std::sort(stages.begin(), stages.end(), [](const auto& a, const auto& b) {
        return a.chunk != b.chunk ? a.chunk < b.chunk : a.stage < b.stage;
      });
      for (const auto& st : stages) {
        per_dim[st.dim].emplace_back(st.start_ns, st.end_ns);
        EXPECT_GE(st.arrive_ns, chunk_end[st.chunk] - 1e-6);
        EXPECT_GE(st.start_ns, st.arrive_ns);
        chunk_end[st.chunk] = st.end_ns;
      }
      for (auto& [dim, iv] : per_dim) {
        std::sort(iv.begin(), iv.end());
        for (size_t i = 1; i < iv.size(); ++i) EXPECT_GE(iv[i].first, iv[i - 1].second - 1e-6 * iv[i].first);
      }
      // Per-dimension utilization never exceeds 1.
      for (const auto& d : r.result.dims) EXPECT_LE(d.utilization, 1 + 1e-9);
    }
  }
}

TEST(SimProperties, MaxChunksPerDimLimitsConcurrency) {
  // With at most one chunk per dimension, a stage's fixed delay can no longer overlap the
  // previous stage on that dimension: start - A_K >= previous end.
  Rng rng(99);
  for (int trial = 0; trial < 40; ++trial) {
    const auto n = random_network(rng);
    const auto req = sim::make_request(CollectiveKind::kAllReduce, 200e6, 32, trial % 2 ? "themis-scf" : "themis-fifo");
    sim::SimOptions one;
    one.record_stages = true;
    one.max_chunks_per_dim = 1;
    const auto r = sim::run_collective(n, req, one);
    std::map<int, std::vector<sim::StageRecord>> per_dim;
    for (const auto& st : r.result.stages) per_dim[st.dim].push_back(st);
    for (auto& [d, v] : per_dim) {
      std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
      const double a_k = coll::fixed_delay_ns(n.dims[static_cast<size_t>(d)], coll::Phase::kReduceScatter);
      for (size_t i = 1; i < v.size(); ++i) EXPECT_GE(v[i].start_ns - a_k, v[i - 1].end_ns - 1e-6 * v[i].end_ns);
    }
    // Bytes are the schedule's, whatever the concurrency.
    sim::SimOptions unlimited;
    EXPECT_NEAR(total_bytes(r.result), total_bytes(sim::run_collective(n, req, unlimited).result), 1e-3);
    EXPECT_GE(r.result.time_ns, r.result.ideal_time_ns);
  }
}

TEST(SimProperties, IdenticalInputGivesIdenticalOutput) {
  Rng rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const auto n = random_network(rng);
    const auto a = run(n, CollectiveKind::kAllReduce, 300e6, 48, "themis-scf");
    const auto b = run(n, CollectiveKind::kAllReduce, 300e6, 48, "themis-scf");
    EXPECT_EQ(sim::to_json(n, a, true).dump(), sim::to_json(n, b, true).dump());
  }
}

TEST(SimProperties, AllReduceOnAMillionNpusStaysAboveIdealTimeAndHalfUtilization) {
  net::Network n{"16^5", {}};
  for (int k = 0; k < 5; ++k) n.dims.push_back({net::DimKind::kSwitch, 16, 400, 2, 500});
  ASSERT_EQ(n.num_npus(), 1u << 20);
  const auto r = run(n, CollectiveKind::kAllReduce, 1e9, 64, "themis-scf");
  EXPECT_GE(r.result.time_ns, r.result.ideal_time_ns);
  EXPECT_GT(r.result.avg_bw_utilization, 0.5);
}

TEST(SimProperties, BadRequestsAreInputErrors) {
  const net::Network n{"x", {{net::DimKind::kRing, 4, 100, 1, 10}}};
  EXPECT_THROW(run(n, CollectiveKind::kAllReduce, 0, 4, "baseline"), InputError);
  EXPECT_THROW(run(n, CollectiveKind::kAllReduce, 1e6, 0, "baseline"), InputError);
  EXPECT_THROW(sched::parse_scheduler("themis-lifo"), InputError);
}

}  // namespace
}  // namespace chorus
