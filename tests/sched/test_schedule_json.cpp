// Schedules as plain data: JSON round trip, validation, and enforcing the per-dimension
// order (Themis Sec. 4.6.2) in the simulator, including detecting a deadlocking order.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "net/presets.h"
#include "sched/schedule_json.h"
#include "sim/result_json.h"
#include "sim/run_collective.h"

namespace chorus {
namespace {

sim::CollectiveRun themis_run(const net::Network& n, CollectiveKind op, int chunks) {
  return sim::run_collective(n, sim::make_request(op, 300e6, chunks, "themis-scf"));
}

TEST(ScheduleJson, RoundTripsEveryOperation) {
  const auto n = *net::find_preset("4D-Ring_FC_Ring_SW");
  for (auto op : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter, CollectiveKind::kAllGather,
                  CollectiveKind::kAllToAll}) {
    const auto run = themis_run(n, op, 24);
    const auto j = sched::to_json(run.schedule);
    const auto back = sched::schedule_from_json(j, n, "mem");
    EXPECT_EQ(sched::to_json(back).dump(), j.dump()) << compact_name(op);
    // Simulating the loaded schedule gives the same result.
    const auto again = sim::run_schedule(n, back);
    EXPECT_DOUBLE_EQ(again.result.time_ns, run.result.time_ns);
  }
}

TEST(ScheduleJson, EnforcedOrderReproducesTheSimulatedOrder) {
  const auto n = *net::find_preset("3D-SW_SW_SW_hetero");
  const auto run = themis_run(n, CollectiveKind::kAllReduce, 64);
  sim::SimOptions enforce;
  enforce.enforce_dim_order = true;
  const auto enforced = sim::run_schedule(n, run.schedule, enforce);
  EXPECT_DOUBLE_EQ(enforced.result.time_ns, run.result.time_ns);
  for (size_t d = 0; d < n.dims.size(); ++d) {
    ASSERT_EQ(enforced.result.dim_order[d].size(), run.schedule.dim_order[d].size());
    for (size_t i = 0; i < run.schedule.dim_order[d].size(); ++i)
      EXPECT_EQ(enforced.result.dim_order[d][i].chunk, run.schedule.dim_order[d][i].chunk);
  }
}

TEST(ScheduleJson, EnforcingFifoOrderOnTheSameScheduleGivesFifoTime) {
  // Themis+FIFO and Themis+SCF share the inter-dimension schedule (Algorithm 1 ignores the
  // policy); enforcing FIFO's per-dimension order on it must give exactly the FIFO run.
  const auto n = *net::find_preset("4D-Ring_SW_SW_SW");
  auto scf = themis_run(n, CollectiveKind::kAllReduce, 32);
  auto fifo = sim::run_collective(n, sim::make_request(CollectiveKind::kAllReduce, 300e6, 32, "themis-fifo"));
  scf.schedule.dim_order = fifo.schedule.dim_order;
  sim::SimOptions enforce;
  enforce.enforce_dim_order = true;
  const auto r = sim::run_schedule(n, scf.schedule, enforce);
  EXPECT_DOUBLE_EQ(r.result.time_ns, fifo.result.time_ns);
}

TEST(ScheduleJson, ContradictoryOrderIsReportedAsDeadlock) {
  // Sec. 4.6.2: if a dimension insists on an operation whose chunk cannot reach it yet, no
  // chunk can proceed. dim1 asks for chunk 0's AG before any RS.
  const net::Network n{"2x2", {{net::DimKind::kSwitch, 2, 100, 1, 10}, {net::DimKind::kSwitch, 2, 100, 1, 10}}};
  auto run = sim::run_collective(n, sim::make_request(CollectiveKind::kAllReduce, 1e6, 2, "baseline"));
  auto& d0 = run.schedule.dim_order[0];
  const auto ag0 = std::find_if(d0.begin(), d0.end(), [](const sched::DimOp& op) {
    return op.chunk == 0 && op.phase == coll::Phase::kAllGather;
  });
  ASSERT_NE(ag0, d0.end());
  std::rotate(d0.begin(), ag0, ag0 + 1);
  sim::SimOptions enforce;
  enforce.enforce_dim_order = true;
  try {
    sim::run_schedule(n, run.schedule, enforce);
    FAIL() << "no deadlock reported";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("deadlocks"), std::string::npos) << m;
    EXPECT_NE(m.find("dim1 waits for chunk 0 AG"), std::string::npos) << m;
  }
}

TEST(ScheduleJson, RejectsBadSchedules) {
  const auto n = *net::find_preset("2D-SW_SW");
  const auto good = sched::to_json(themis_run(n, CollectiveKind::kAllReduce, 4).schedule);
  auto expect_error = [&](nlohmann::json j, const std::string& needle) {
    try {
      sched::schedule_from_json(j, n, "s.json");
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto j = good;
  j["chunks"][1]["rs_order"] = {0, 0};
  expect_error(j, "chunks[1]");
  j = good;
  j["num_chunks"] = 5;
  expect_error(j, "num_chunks = 5");
  j = good;
  j["policy"] = "lilo";
  expect_error(j, "'lilo' is not fifo, scf or lifo");
  j = good;
  j["extra"] = 1;
  expect_error(j, "unknown key 'extra'");
  j = good;
  j["dim_order"][0].erase(0);
  expect_error(j, "dim_order[0]");
  j = good;
  j.erase("op");
  expect_error(j, "missing field 'op'");
  j = good;
  j["size_bytes"] = "big";
  expect_error(j, "size_bytes");
  j = good;
  j["scheduler"] = "ideal";  // a bound, not a schedule (docs/schedule-format.md)
  expect_error(j, "'ideal' is a bound");
  EXPECT_THROW(sched::load_schedule_file("/nonexistent.json", n), InputError);
}

}  // namespace
}  // namespace chorus
