#pragma once
// What `chorus bench` and `chorus tune` print, laid out as nccl-tests prints it: '#' header
// lines, one line per row (size, count, type, redop, root, then time / algbw / busbw and, when
// checked, #wrong, out of place and in place; "-" where a value does not apply or was not
// measured), and the closing lines; or the rows as JSON.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rt_bench/bench_runner.h"

namespace chorus::rt {

// `check`: the rows were checked (BenchOptions::check): #wrong columns / keys.
std::string bench_table(const std::vector<BenchRow>& rows, bool check);
// The table a line at a time, as `chorus bench` prints it while it measures: the header lines
// (`backends`: every name the backend column will hold, bench_backend_names), then each row.
// bench_table is the header followed by every row.
std::string bench_table_header(int world_size, int iters, int warmup, const std::vector<std::string>& backends,
                               bool check);
std::string bench_table_row(const BenchRow& row, const std::vector<std::string>& backends, bool check);
// "# Out of bounds values : N OK" (with `check`; FAILED when N > 0) and, per backend and
// operation in the order of the rows, "# Avg bus bandwidth    : X.XXX  (backend op)", as
// nccl-tests ends its output (the number is the sixth word, where nccl-tests has it).
std::string bench_summary(const std::vector<BenchRow>& rows, bool check);
// One row as a JSON object (what `--jsonl` prints per line as it is measured); bench_json is the
// array of every row's.
nlohmann::json bench_row_json(const BenchRow& row, bool check);
nlohmann::json bench_json(const std::vector<BenchRow>& rows, bool check);

// nccl-tests' "Avg bus bandwidth": the mean busbw over every row's out-of-place and (where
// measured) in-place run, GB/s.
double average_busbw(const std::vector<BenchRow>& rows);
// average_busbw of the rows of each backend and operation, in the order they first appear.
struct BusbwAverage {
  std::string backend;
  CollectiveKind op;
  double busbw_GBps;
};
std::vector<BusbwAverage> average_busbw_by_backend_op(const std::vector<BenchRow>& rows);
// nccl-tests' "Out of bounds values": the wrong elements of every checked run (the sum of #wrong).
std::int64_t total_wrong(const std::vector<BenchRow>& rows);
// One line per checked run that failed: backend, operation, size, placement, first error.
std::vector<std::string> bench_failures(const std::vector<BenchRow>& rows);

}  // namespace chorus::rt
