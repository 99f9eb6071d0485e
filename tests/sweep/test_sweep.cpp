// chorus_sweep: specs, keys, the pool, the cost estimate, the database, the table; and a sweep of
// simulator runs on several workers equal to the serial one (run under ThreadSanitizer too).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "core/units.h"
#include "net/presets.h"
#include "net/graph/graph_yaml.h"
#include "sim/dag_executor.h"
#include "sim/jobs/job_mix.h"
#include "sim/jobs/job_spec.h"
#include "sim/result_json.h"
#include "sim/workload_json.h"
#include "workload/parallelism.h"
#include "workload/workload_yaml.h"
#include "sim/run_collective.h"
#include "core/cost_estimate.h"
#include "sweep/flatten.h"
#include "sweep/point_key.h"
#include "core/worker_pool.h"
#include "sweep/result_db.h"
#include "sweep/results_table.h"
#include "sweep/run_sweep.h"
#include "sweep/spec.h"

namespace chorus::sweep {
namespace {

const std::vector<CommandDef> kCommands{
    {"run",
     {{"a", ParamKind::kString}, {"n", ParamKind::kInt}, {"x", ParamKind::kDouble}, {"size", ParamKind::kBytes}}}};

Spec parse(const std::string& text) { return parse_spec(text, "s.yaml", kCommands); }

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SweepSpec, GridIsTheProductInFileOrderLastFastest) {
  const auto s = parse("command: run\nfixed: {x: 0.5}\ngrid:\n  a: [p, q, r]\n  n: [1, 2]\n");
  ASSERT_EQ(s.points.size(), 6u);
  const std::vector<std::pair<std::string, std::string>> want{{"p", "1"}, {"p", "2"}, {"q", "1"},
                                                              {"q", "2"}, {"r", "1"}, {"r", "2"}};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(s.points[i].at("a").text, want[i].first);
    EXPECT_EQ(s.points[i].at("n").text, want[i].second);
    EXPECT_EQ(s.points[i].at("x").text, "0.5");
  }
  EXPECT_EQ(s.points[0].at("n").at, "s.yaml:5");
  EXPECT_EQ(s.axes, (std::vector<std::string>{"a", "n"}));
}

TEST(SweepSpec, PointsAndRandomSamplesAppend) {
  const std::string text =
      "command: run\ngrid: {a: [p, q]}\npoints:\n  - {a: z, n: 3}\nrandom:\n  count: 50\n  seed: 3\n"
      "  params:\n    n: {int_uniform: [2, 5]}\n    size: {log_uniform: [1KiB, 1MiB]}\n    a: {choice: [u, v]}\n";
  const auto s = parse(text);
  ASSERT_EQ(s.points.size(), 2u + 1u + 50u);
  EXPECT_EQ(s.points[2].at("a").text, "z");
  std::set<std::string> as, ns;
  for (std::size_t i = 3; i < s.points.size(); ++i) {
    const int n = std::stoi(s.points[i].at("n").text);
    EXPECT_GE(n, 2);
    EXPECT_LE(n, 5);
    const long long size = std::stoll(s.points[i].at("size").text);
    EXPECT_GE(size, 1024);
    EXPECT_LE(size, 1 << 20);
    as.insert(s.points[i].at("a").text);
    ns.insert(s.points[i].at("n").text);
  }
  EXPECT_EQ(as, (std::set<std::string>{"u", "v"}));
  EXPECT_EQ(ns.size(), 4u);  // 50 draws of 4 values
  // The seed fixes the samples; another seed draws others.
  const auto again = parse(text);
  const auto other = parse(std::string(text).replace(text.find("seed: 3"), 7, "seed: 4"));
  bool differs = false;
  for (std::size_t i = 3; i < s.points.size(); ++i) {
    EXPECT_EQ(point_key("run", s.points[i]), point_key("run", again.points[i]));
    differs = differs || point_key("run", s.points[i]) != point_key("run", other.points[i]);
  }
  EXPECT_TRUE(differs);
}

TEST(SweepSpec, ErrorsNameFileLineAndField) {
  EXPECT_NE(error_of("command: run\ngrid:\n  n: [1, x]\n").find("s.yaml:3: field 'n' must be an integer"),
            std::string::npos);
  EXPECT_NE(error_of("command: run\ngrid:\n  b: [1]\n").find("s.yaml:3: unknown parameter 'b'"), std::string::npos);
  EXPECT_NE(error_of("command: run\nfixed: {n: 1}\ngrid:\n  n: [2]\n").find("s.yaml:4"), std::string::npos);
  EXPECT_NE(error_of("command: walk\n").find("s.yaml:1"), std::string::npos);
  EXPECT_NE(error_of("command: run\nrandom: {count: 2, seed: 1, params: {a: {uniform: [1, 2]}}}\n").find("'a'"),
            std::string::npos);
  EXPECT_NE(error_of("grid: {n: [1]}\n").find("missing field 'command'"), std::string::npos);
}

// FNV-1a 64 as published (offset basis and prime), written out here apart from core/fnv1a.h.
std::uint64_t reference_fnv(const std::string& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

TEST(SweepKey, IsFnv1aOfCommandAndSortedParameters) {
  ASSERT_EQ(reference_fnv("a"), 0xaf63dc4c8601ec8cull);  // the published test vector
  Point p;
  p["n"] = {"4", "here"};
  p["a"] = {"x", "there"};  // the order given and where it was given do not matter
  const std::string bytes = std::string("run") + '\0' + "a=x" + '\0' + "n=4" + '\0';
  char want[17];
  std::snprintf(want, sizeof want, "%016llx", static_cast<unsigned long long>(reference_fnv(bytes)));
  EXPECT_EQ(point_key("run", p), want);
}

TEST(SweepCostEstimate, ScalesTheMeanByEachValuesMean) {
  CostEstimate c;
  EXPECT_EQ(c.predict({{"s", "1"}}), 0);
  c.add({{"s", "1"}, {"k", "a"}}, 1.0);
  c.add({{"s", "2"}, {"k", "a"}}, 3.0);
  // mean 2; s=2 averages 3 (x1.5), k=a averages 2 (x1), an unseen value x1
  EXPECT_DOUBLE_EQ(c.predict({{"s", "2"}, {"k", "a"}}), 3.0);
  EXPECT_DOUBLE_EQ(c.predict({{"s", "1"}, {"k", "b"}}), 1.0);
  EXPECT_DOUBLE_EQ(c.predict({{"s", "9"}}), 2.0);
}

TEST(SweepPool, RunsEachIndexOnceAndStops) {
  std::vector<std::atomic<int>> seen(1000);
  std::atomic<bool> stop{false};
  run_pool(seen.size(), 4, stop, [&](std::size_t i) { ++seen[i]; });
  for (const auto& s : seen) EXPECT_EQ(s.load(), 1);
  std::atomic<int> ran{0};
  run_pool(1000, 3, stop, [&](std::size_t i) {
    ++ran;
    if (i == 10) stop = true;
  });
  EXPECT_LT(ran.load(), 1000);
  EXPECT_GE(ran.load(), 11);
  stop = false;
  EXPECT_THROW(run_pool(100, 2, stop,
                        [](std::size_t i) {
                          if (i == 50) throw std::runtime_error("x");
                        }),
               std::runtime_error);
}

TEST(SweepFlatten, PathsOfObjectsAndArrays) {
  const auto f =
      flatten(nlohmann::ordered_json::parse(R"({"t": 1.5, "dims": [{"u": 0.25}, {"u": 1}], "o": {"k": "v"}})"));
  EXPECT_EQ(f.dump(), R"({"t":1.5,"dims.0.u":0.25,"dims.1.u":1,"o.k":"v"})");
}

struct TempDb {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("chorus-sweep-" + std::to_string(::getpid()) + "-" +
                       ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db"))
                         .string();
  TempDb() { remove(); }
  ~TempDb() { remove(); }
  void remove() const {
    for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path + ext);
  }
};

TEST(SweepDb, FirstRowOfAKeyStaysAndTwoWritersShareAFile) {
  TempDb t;
  {
    ResultDb a(t.path), b(t.path);  // two connections, as two processes would have
    std::thread ta([&] {
      for (int i = 0; i < 200; ++i) a.insert({"k" + std::to_string(i), "run", {{"n", "1"}}, {{"t", i}}, "", 0.1, 0});
    });
    std::thread tb([&] {
      for (int i = 100; i < 300; ++i) b.insert({"k" + std::to_string(i), "run", {{"n", "2"}}, {{"t", -i}}, "", 0.1, 1});
    });
    ta.join();
    tb.join();
  }
  ResultDb db(t.path);
  EXPECT_EQ(db.keys().size(), 300u);
  const auto rows = db.rows({"k0", "k299", "nope"});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows.at("k299").metrics["t"], -299);
  EXPECT_EQ(rows.at("k0").params["n"], "1");
}

TEST(SweepTable, ColumnsInSpecOrderAndClashingMetricsRenamed) {
  const auto spec = parse("command: run\nfixed: {x: 1}\ngrid: {a: [p, 'q,r']}\n");
  const auto points = distinct_points(spec);
  std::map<std::string, Row> rows;
  rows[points[1].first] = Row{points[1].first, "run", {{"a", "q,r"}, {"x", "1"}}, {{"a", "A"}, {"t", 2}}, "", 0, 0};
  rows[points[0].first] = Row{points[0].first, "run", {{"a", "p"}, {"x", "1"}}, {{"a", "A"}, {"t", 1}}, "", 0, 0};
  const auto csv = to_csv(results_table(spec, {points[0].first, points[1].first}, rows));
  EXPECT_EQ(csv,
            "key,a,x,result.a,t,error\n" + points[0].first + ",p,1,A,1,\n" + points[1].first + ",\"q,r\",1,A,2,\n");
}

// Every point of `spec` run by `runner` on `workers` workers: its rows (metrics and error) by key,
// and how many points ran.
std::map<std::string, std::string> rows_on(const Spec& spec, const PointRunner& runner, int workers,
                                           std::size_t* ran = nullptr) {
  std::mutex m;
  std::map<std::string, std::string> out;
  SweepStore store{{}, {}, [&](const Row& r) {
                     const std::lock_guard<std::mutex> lock(m);
                     out[r.key] = r.metrics.dump() + r.error;
                   }};
  SweepOptions o;
  o.workers = workers;
  const auto s = run_sweep(spec, store, runner, o);
  if (ran != nullptr) *ran = s.ran;
  return out;
}

// Simulator runs on 4 workers give the rows of 1 worker (ThreadSanitizer: no race in the
// simulator's state).
TEST(SweepRun, ParallelSimulationsEqualSerial) {
  const auto spec = parse_spec(
      "command: coll\ngrid:\n  topology: [3D-SW_SW_SW_homo, 4D-Ring_FC_Ring_SW]\n"
      "  scheduler: [baseline, themis-fifo, themis-scf]\n  size: [1MiB, 64MiB]\n  chunks: [16, 256]\n",
      "s.yaml", {{"coll", {{"topology"}, {"scheduler"}, {"size", ParamKind::kBytes}, {"chunks", ParamKind::kInt}}}});
  const PointRunner runner = [](const Point& p) {
    const auto network = *net::find_preset(p.at("topology").text);
    const auto req =
        sim::make_request(CollectiveKind::kAllReduce, static_cast<double>(parse_bytes(p.at("size").text, "size")),
                          std::stoi(p.at("chunks").text), p.at("scheduler").text);
    return flatten(
        nlohmann::ordered_json::parse(sim::to_json(network, sim::run_collective(network, req), false).dump()));
  };
  std::size_t ran_serial = 0, ran_parallel = 0;
  const auto serial = rows_on(spec, runner, 1, &ran_serial);
  ASSERT_EQ(serial.size(), 24u);
  EXPECT_EQ(rows_on(spec, runner, 4, &ran_parallel), serial);
  EXPECT_EQ(ran_serial, 24u);
  EXPECT_EQ(ran_parallel, 24u);
}

// Training iterations (the DAG executor, the analytical network) on 3 workers, as on 1.
TEST(SweepRun, ParallelWorkloadSimulationsEqualSerial) {
  const auto spec =
      parse_spec("command: w\ngrid:\n  workload: [resnet152, gnmt]\n  scheduler: [baseline, themis-scf]\n", "s.yaml",
                 {{"w", {{"workload"}, {"scheduler"}}}});
  const PointRunner runner = [](const Point& p) {
    const auto network = *net::find_preset("4D-Ring_FC_Ring_SW");
    auto entry = workload::load_workload(p.at("workload").text);
    entry.parallelism.iterations = 1;
    const auto dag = workload::build_training_dag(entry.model, entry.parallelism, network);
    sim::WorkloadSimOptions options;
    options.scheduler = sched::parse_scheduler(p.at("scheduler").text);
    const auto run = sim::simulate_workload(dag, network, options);
    return flatten(nlohmann::ordered_json::parse(sim::to_json(network, dag, options, run.result).dump()));
  };
  const auto serial = rows_on(spec, runner, 1);
  ASSERT_EQ(serial.size(), 4u);
  for (const auto& [key, metrics] : serial) EXPECT_NE(metrics.find("iteration_time_ns"), std::string::npos) << metrics;
  EXPECT_EQ(rows_on(spec, runner, 3), serial);
}

// Jobs sharing a fabric (the flow-level model's shared engine) on 3 workers, as on 1.
TEST(SweepRun, ParallelJobMixesEqualSerial) {
  const std::string dir = CHORUS_EXAMPLES_DIR "/jobs/";
  const auto spec = parse_spec(
      "command: j\ngrid:\n  jobs: [placement-contiguous.yaml, placement-interleaved.yaml, "
      "placement-shifted.yaml]\n  tolerance: [0, 0.001]\n",
      "s.yaml", {{"j", {{"jobs"}, {"tolerance", ParamKind::kDouble}}}});
  const PointRunner runner = [&](const Point& p) {
    const auto file = sim::jobs::load_jobs_yaml(dir + p.at("jobs").text);
    const auto mix = sim::jobs::make_job_mix(file, net::load_fabric_yaml(file.fabric));
    const auto result = sim::jobs::run_job_mix(mix, std::stod(p.at("tolerance").text));
    return flatten(nlohmann::ordered_json::parse(sim::jobs::to_json(mix, result).dump()));
  };
  const auto serial = rows_on(spec, runner, 1);
  ASSERT_EQ(serial.size(), 6u);
  for (const auto& [key, metrics] : serial) EXPECT_NE(metrics.find("slowdown"), std::string::npos) << metrics;
  EXPECT_EQ(rows_on(spec, runner, 3), serial);
}

TEST(SweepRun, RanksSplitByIndexAndSkipDone) {
  const auto spec = parse("command: run\ngrid: {n: [1, 2, 3, 4, 5, 6, 7]}\n");
  const auto points = distinct_points(spec);
  std::vector<std::string> ran;
  std::mutex m;
  SweepStore store{{points[1].first}, {}, [&](const Row& r) {
                     const std::lock_guard<std::mutex> lock(m);
                     ran.push_back(r.params["n"]);
                   }};
  SweepOptions o;
  o.rank = 1;
  o.ranks = 3;
  const auto s = run_sweep(
      spec, store, [](const Point&) { return nlohmann::ordered_json::object(); }, o);
  EXPECT_EQ(s.share, 2u);  // indices 1 and 4
  EXPECT_EQ(s.already, 1u);
  EXPECT_EQ(ran, std::vector<std::string>{"5"});
}

}  // namespace
}  // namespace chorus::sweep
