#pragma once
// Micro-benchmarks of the runtime in the style of nccl-tests, shared by `chorus bench` and
// `chorus tune`. Every rank runs the same loops and times every iteration; an iteration's time
// is the slowest rank's, and a row gives the min / mean / max of those over the iterations.
// Sizes follow nccl-tests: the per-rank buffer for all_reduce, reduce,
// broadcast and send_recv; the whole (n x block) buffer for all_gather, reduce_scatter,
// gather, scatter and the all-to-alls. algbw = bytes / time, busbw = algbw x factor
// (all_reduce 2(n-1)/n; all_gather, reduce_scatter, gather, scatter, all_to_all (n-1)/n;
// broadcast, reduce, send_recv 1), from the mean time, in GB/s (10^9 bytes/s, as nccl-tests).
#include <cstddef>
#include <string>
#include <vector>

#include "rt/types.h"

namespace chorus::rt {

struct BenchOptions {
  std::vector<std::string> backends;
  std::vector<OpKind> ops;
  std::vector<std::size_t> sizes_bytes;
  int iters = 20;
  int warmup = 5;
  bool check = false;  // verify one result per (backend, op, size) against a local reference
  DType dtype = DType::f32;
  bool async_op = false;  // issue through the progress queue (async + wait) instead of inline
  // The operations that take algorithms also with every named algorithm of each backend
  // (rt::algorithm_names), as rows of backend "mpi:ring", "gloo:bcube", ...
  bool algorithms = false;
};

struct BenchRow {
  std::string backend;
  OpKind op = OpKind::all_reduce;
  std::size_t bytes = 0;
  int world_size = 1;
  double min_us = 0;   // fastest iteration (slowest rank's time in each iteration)
  double mean_us = 0;  // mean over iterations; what bandwidths and `chorus tune` use
  double max_us = 0;   // slowest iteration
  double algbw_GBps = 0;  // GB/s = 10^9 bytes/s
  double busbw_GBps = 0;
  std::string check;  // "", "ok" or the first error
};

// Parses the short names of --ops (allreduce, alltoall, ...; "all" for every operation).
std::vector<OpKind> parse_bench_ops(const std::string& text);
std::string bench_op_name(OpKind op);
double bus_factor(OpKind op, int world_size);

// Collective: every rank must call it with the same options (runtime initialised).
std::vector<BenchRow> run_bench(const BenchOptions& options);

}  // namespace chorus::rt
