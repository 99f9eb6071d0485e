// The reports of `chorus run collective | schedule` and `chorus run workload`: to_json gives the
// keys and value types that `--json` prints (docs/schedule-executor.md, docs/syndicate.md, and the
// tests and studies that read them: reproduce themis-real, tests/rt/*.py), and the tables read
// the typed fields.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "eval/real/schedule_runner.h"
#include "eval/real/workload_runner.h"

namespace chorus::eval {
namespace {

std::vector<std::string> keys(const nlohmann::json& j) {
  std::vector<std::string> out;
  for (const auto& [k, v] : j.items()) out.push_back(k);
  return out;
}

ScheduleReport schedule_report() {
  ScheduleReport r;
  r.rank = 0;
  r.network = "grid-2x2";
  r.grid = "2x2";
  r.ranks = 4;
  r.op = "allreduce";
  r.size_bytes = 1 << 20;
  r.chunks = 4;
  r.scheduler = "themis-scf";
  r.dtype = "f32";
  r.reduce = "sum";
  r.emulate = true;
  r.iters = 2;
  r.time_ns = 2e6;
  r.times_ns = {2e6, 2.2e6};
  r.predicted_time_ns = 1e6;
  r.ratio = 2;
  r.check = "passed";
  r.tail_elements = 3;
  for (std::size_t d = 1; d <= 2; ++d) {
    ScheduleDimRow row;
    row.dim = d;
    row.size = 2;
    row.backend = "shm";
    row.backend_chosen_by = d == 1 ? "given" : "tuning table";
    row.backend_estimate_us = {{"gloo", 40.0}, {"shm", 12.5}};
    row.bytes_per_rank = 524288;
    row.busy_ns = 1.5e6;
    row.stages = 8;
    row.predicted_bytes_per_rank = 524288;
    row.predicted_busy_ns = 0.75e6;
    r.dims.push_back(row);
  }
  return r;
}

TEST(RealReports, ScheduleReportJson) {
  const auto j = to_json(schedule_report());
  EXPECT_EQ(keys(j), (std::vector<std::string>{"check", "chunks", "dims", "dtype", "emulate", "grid", "iters",
                                               "network", "op", "predicted_time_ns", "rank", "ranks", "ratio", "reduce",
                                               "scheduler", "size_bytes", "tail_elements", "time_ns", "times_ns"}));
  EXPECT_TRUE(j["rank"].is_number_integer());
  EXPECT_TRUE(j["ranks"].is_number_integer());
  EXPECT_TRUE(j["chunks"].is_number_integer());
  EXPECT_TRUE(j["iters"].is_number_integer());
  EXPECT_TRUE(j["size_bytes"].is_number_float());
  EXPECT_TRUE(j["time_ns"].is_number_float());
  EXPECT_TRUE(j["predicted_time_ns"].is_number_float());
  EXPECT_TRUE(j["ratio"].is_number_float());
  EXPECT_TRUE(j["emulate"].is_boolean());
  EXPECT_TRUE(j["tail_elements"].is_number_unsigned());
  EXPECT_EQ(j["tail_elements"].get<std::size_t>(), 3u);
  EXPECT_EQ(j["times_ns"], nlohmann::json({2e6, 2.2e6}));
  EXPECT_EQ(j["check"], "passed");
  ASSERT_EQ(j["dims"].size(), 2u);
  const auto& d = j["dims"][1];
  EXPECT_EQ(keys(d), (std::vector<std::string>{"backend", "backend_chosen_by", "backend_estimate_us", "busy_ns",
                                               "bytes_per_rank", "dim", "predicted_busy_ns", "predicted_bytes_per_rank",
                                               "size", "stages"}));
  EXPECT_EQ(d["dim"].get<int>(), 2);
  EXPECT_EQ(d["backend_chosen_by"], "tuning table");
  EXPECT_EQ(d["backend_estimate_us"], nlohmann::json({{"gloo", 40.0}, {"shm", 12.5}}));
  EXPECT_TRUE(d["stages"].is_number_integer());
  EXPECT_TRUE(d["busy_ns"].is_number_float());
}

TEST(RealReports, ScheduleReportTable) {
  const std::string s = format_schedule_report(schedule_report());
  EXPECT_NE(
      s.find("grid-2x2 on 4 ranks (2x2), allreduce of 1 MiB in 4 chunks, scheduler themis-scf, f32 sum, emulated"),
      std::string::npos)
      << s;
  EXPECT_NE(s.find("ratio      " + std::string(7, ' ') + "2.000"), std::string::npos) << s;
  EXPECT_NE(s.find("dim 2 on shm: tuning table"), std::string::npos) << s;
  EXPECT_EQ(s.find("dim 1 on shm"), std::string::npos) << s;  // given: no note
}

TEST(RealReports, WorkloadReportJson) {
  WorkloadReport r;
  r.ranks = 4;
  r.workload = "moe-tiny";
  r.topology = "host";
  r.method = "syndicate";
  r.iterations = 2;
  r.repeat = 3;
  r.comm_ops = 6;
  r.steps = 36;
  r.check = "passed";
  r.same_order_on_every_rank = true;
  r.iteration_time_ns = 3e6;
  r.predicted_iteration_time_ns = 2e6;
  r.ratio = 1.5;
  r.plans = {{"syndicate", 0, 2e6}, {"greedy", 2, 2.5e6}};
  r.plan_switches = 1;
  r.runs_with_final_plan = 1;
  r.compute = "sleep";
  r.costs = "measured";
  r.last_run.steps = 5;
  const auto j = to_json(r);
  EXPECT_EQ(keys(j), (std::vector<std::string>{"app_compute_ns",
                                               "app_exposed_comm_ns",
                                               "app_submit_ns",
                                               "calibration_s",
                                               "check",
                                               "comm_ops",
                                               "compute",
                                               "costs",
                                               "iteration_time_ns",
                                               "iterations",
                                               "last_run",
                                               "method",
                                               "order_wait_fraction",
                                               "plan_file",
                                               "plan_switch_aborts",
                                               "plan_switches",
                                               "planned_compute_ns",
                                               "plans",
                                               "predicted_iteration_time_ns",
                                               "rank",
                                               "ranks",
                                               "ratio",
                                               "repeat",
                                               "runs_with_final_plan",
                                               "same_order_on_every_rank",
                                               "steps",
                                               "submit_jitter_us",
                                               "submit_wait_fraction",
                                               "topology",
                                               "workload"}));
  EXPECT_TRUE(j["comm_ops"].is_number_unsigned());
  EXPECT_TRUE(j["steps"].is_number_unsigned());
  EXPECT_TRUE(j["runs_with_final_plan"].is_number_unsigned());
  EXPECT_TRUE(j["iterations"].is_number_integer());
  EXPECT_TRUE(j["same_order_on_every_rank"].is_boolean());
  EXPECT_EQ(j["plans"], nlohmann::json::parse(R"([{"method": "syndicate", "from_run": 0,
      "predicted_iteration_time_ns": 2e6}, {"method": "greedy", "from_run": 2, "predicted_iteration_time_ns": 2.5e6}])"));
  EXPECT_EQ(j["last_run"], to_json(r.last_run));
  EXPECT_EQ(j["last_run"]["steps"], 5);
  const std::string s = format_workload_report(r);
  EXPECT_NE(
      s.find("moe-tiny on host (4 ranks), plan by syndicate: 6 comm-ops, 36 steps per run, 2 iterations x 3 runs"),
      std::string::npos)
      << s;
  EXPECT_NE(s.find("same motif order on every rank: yes"), std::string::npos) << s;
}

}  // namespace
}  // namespace chorus::eval
