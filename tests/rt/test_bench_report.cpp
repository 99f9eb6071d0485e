// Unit tests of `chorus bench`'s output (rt_bench/bench_report.h) on rows made by hand: the
// nccl-tests columns, "-" where a run does not apply, the closing lines and the JSON keys.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "rt_bench/bench_report.h"

using chorus::CollectiveKind;

namespace rt = chorus::rt;

namespace {

rt::BenchTiming timing(double mean_us, double busbw, std::int64_t wrong, const std::string& check) {
  rt::BenchTiming t;
  t.min_us = mean_us / 2;
  t.mean_us = mean_us;
  t.max_us = mean_us * 2;
  t.algbw_GBps = busbw / 2;
  t.busbw_GBps = busbw;
  t.wrong = wrong;
  t.check = check;
  return t;
}

// An all-reduce measured both ways and a broadcast (no in-place form) with 3 wrong elements.
std::vector<rt::BenchRow> sample_rows() {
  rt::BenchRow a;
  a.backend = "shm";
  a.op = CollectiveKind::kAllReduce;
  a.bytes = 8;
  a.count = 2;
  a.redop = rt::ReduceOp::sum;
  a.world_size = 2;
  a.iters = 7;
  a.warmup = 3;
  a.out_of_place = timing(10.5, 1.0, 0, "ok");
  a.in_place = timing(9.25, 2.0, 0, "ok");
  rt::BenchRow b = a;
  b.backend = "gloo:ring";
  b.op = CollectiveKind::kBroadcast;
  b.bytes = 32;
  b.count = 8;
  b.redop.reset();
  b.root = 0;
  b.out_of_place = timing(20, 4.5, 3, "element 1: got 0 expected 1");
  b.in_place.reset();
  return {a, b};
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string s; std::getline(in, s);) out.push_back(s);
  return out;
}

}  // namespace

TEST(BenchReport, AverageAndWrongCoverEveryMeasuredRun) {
  const auto rows = sample_rows();
  EXPECT_DOUBLE_EQ(rt::average_busbw(rows), (1.0 + 2.0 + 4.5) / 3);  // the broadcast has no in-place run
  EXPECT_EQ(rt::total_wrong(rows), 3);
  // One average per backend and operation (shm's all-reduce: (1 + 2) / 2; gloo:ring's broadcast,
  // out of place only: 4.5), never shm's and gloo's together; the number is the sixth word.
  EXPECT_EQ(rt::bench_summary(rows, true),
            "# Out of bounds values : 3 FAILED\n"
            "# Avg bus bandwidth    : 1.500  (shm allreduce)\n"
            "# Avg bus bandwidth    : 4.500  (gloo:ring broadcast)\n");
  EXPECT_EQ(rt::bench_summary(rows, false),
            "# Avg bus bandwidth    : 1.500  (shm allreduce)\n# Avg bus bandwidth    : 4.500  (gloo:ring broadcast)\n");
  EXPECT_EQ(words(lines_of(rt::bench_summary(rows, false))[0])[5], "1.500");
  auto good = rows;
  good[1].out_of_place.wrong = 0;
  EXPECT_EQ(lines_of(rt::bench_summary(good, true))[0], "# Out of bounds values : 0 OK");
  const auto failures = rt::bench_failures(rows);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0], "gloo:ring broadcast 32 B out of place: 3 wrong element(s); element 1: got 0 expected 1");
}

TEST(BenchReport, AveragesGroupRowsOfABackendAndOperationWhereverTheyAre) {
  auto rows = sample_rows();
  rows[1].op = CollectiveKind::kAllReduce;  // gloo:ring allreduce between two shm allreduce rows
  rows[1].out_of_place.busbw_GBps = 100;
  rt::BenchRow c = rows[0];
  c.out_of_place.busbw_GBps = 3.0;
  c.in_place->busbw_GBps = 6.0;
  rows.push_back(c);
  const auto avg = rt::average_busbw_by_backend_op(rows);
  ASSERT_EQ(avg.size(), 2u);
  EXPECT_EQ(avg[0].backend, "shm");
  EXPECT_DOUBLE_EQ(avg[0].busbw_GBps, (1.0 + 2.0 + 3.0 + 6.0) / 4);
  EXPECT_EQ(avg[1].backend, "gloo:ring");
  EXPECT_DOUBLE_EQ(avg[1].busbw_GBps, 100.0);
}

TEST(BenchReport, TableLineByLineIsTheWholeTable) {
  // What `chorus bench` prints as it measures: the header for every backend name, then each row
  // as it comes, is the table bench_table makes of all rows at the end.
  const auto rows = sample_rows();
  for (bool check : {false, true}) {
    const std::vector<std::string> names = {"shm", "gloo:ring"};
    std::string streamed = rt::bench_table_header(2, 7, 3, names, check);
    for (const auto& r : rows) streamed += rt::bench_table_row(r, names, check);
    EXPECT_EQ(streamed, rt::bench_table(rows, check));
  }
}

TEST(BenchReport, TableHasTheNcclTestsColumns) {
  const auto lines = lines_of(rt::bench_table(sample_rows(), true));
  std::vector<std::string> data;
  for (const auto& l : lines) {
    ASSERT_FALSE(l.empty());
    if (l[0] != '#') data.push_back(l);
  }
  ASSERT_EQ(data.size(), 2u);
  EXPECT_NE(lines[0].find("2 ranks; 7 iterations after 3 warm-ups"), std::string::npos) << lines[0];
  const std::vector<std::string> names = {"#",    "backend", "op",    "size",   "count", "type",  "redop", "root",
                                          "time", "algbw",   "busbw", "#wrong", "time",  "algbw", "busbw", "#wrong"};
  bool found = false;
  for (const auto& l : lines) found |= words(l) == names;
  EXPECT_TRUE(found) << rt::bench_table(sample_rows(), true);
  EXPECT_EQ(words(data[0]), (std::vector<std::string>{"shm", "allreduce", "8", "2", "f32", "sum", "-", "10.50", "0.500",
                                                      "1.000", "0", "9.25", "1.000", "2.000", "0"}));
  EXPECT_EQ(words(data[1]), (std::vector<std::string>{"gloo:ring", "broadcast", "32", "8", "f32", "-", "0", "20.00",
                                                      "2.250", "4.500", "3", "-", "-", "-", "-"}));
  // The columns line up: every data line as long as the column names' line.
  for (const auto& l : lines) {
    if (words(l) == names) {
      EXPECT_EQ(l.size(), data[0].size());
    }
  }
  // Without --check, no #wrong columns.
  const auto unchecked = lines_of(rt::bench_table(sample_rows(), false));
  EXPECT_EQ(words(unchecked.back()).size(), 13u);
}

TEST(BenchReport, JsonRowsCarryBothPlacements) {
  const auto j = rt::bench_json(sample_rows(), true);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["dtype"], "f32");
  EXPECT_EQ(j[0]["count"], 2);
  EXPECT_EQ(j[0]["redop"], "sum");
  EXPECT_TRUE(j[0]["root"].is_null());
  EXPECT_EQ(j[0]["iters"], 7);
  EXPECT_EQ(j[0]["warmup"], 3);
  EXPECT_EQ(j[0]["mean_us"], 10.5);  // out of place: the row's own keys, as before
  EXPECT_EQ(j[0]["min_us"], 5.25);
  EXPECT_EQ(j[0]["max_us"], 21.0);
  EXPECT_EQ(j[0]["in_place"]["mean_us"], 9.25);
  EXPECT_EQ(j[0]["in_place"]["busbw_GBps"], 2.0);
  EXPECT_EQ(j[0]["in_place"]["wrong"], 0);
  EXPECT_TRUE(j[1]["in_place"].is_null());
  EXPECT_TRUE(j[1]["redop"].is_null());
  EXPECT_EQ(j[1]["root"], 0);
  EXPECT_EQ(j[1]["wrong"], 3);
  EXPECT_EQ(j[1]["check"], "element 1: got 0 expected 1");
  EXPECT_FALSE(rt::bench_json(sample_rows(), false)[0].contains("wrong"));
}
