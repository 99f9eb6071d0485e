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
// "# Out of bounds values : N OK" (with `check`; FAILED when N > 0) and
// "# Avg bus bandwidth    : X.XXX", as nccl-tests ends its output.
std::string bench_summary(const std::vector<BenchRow>& rows, bool check);
nlohmann::json bench_json(const std::vector<BenchRow>& rows, bool check);

// nccl-tests' "Avg bus bandwidth": the mean busbw over every row's out-of-place and (where
// measured) in-place run, GB/s.
double average_busbw(const std::vector<BenchRow>& rows);
// nccl-tests' "Out of bounds values": the wrong elements of every checked run (the sum of #wrong).
std::int64_t total_wrong(const std::vector<BenchRow>& rows);
// One line per checked run that failed: backend, operation, size, placement, first error.
std::vector<std::string> bench_failures(const std::vector<BenchRow>& rows);

}  // namespace chorus::rt
