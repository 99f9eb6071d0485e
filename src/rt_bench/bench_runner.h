#pragma once
// Micro-benchmarks of the runtime in the style of nccl-tests, shared by `chorus bench` and
// `chorus tune`. Every rank runs the same loops and times every iteration; an iteration's time
// is the slowest rank's, and a row gives the min / mean / max of those over the iterations, out
// of place and (BenchOptions::in_place) in place. Output: rt_bench/bench_report.h.
// Sizes follow nccl-tests: the per-rank buffer for all_reduce, reduce,
// broadcast and send_recv; the whole (n x block) buffer for all_gather, reduce_scatter,
// gather, scatter and the all-to-alls. algbw = bytes / time, busbw = algbw x factor
// (all_reduce 2(n-1)/n; all_gather, reduce_scatter, gather, scatter, all_to_all (n-1)/n;
// broadcast, reduce, send_recv 1), from the mean time, in GB/s (10^9 bytes/s, as nccl-tests).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rt/types.h"

namespace chorus::rt {
class Runtime;  // rt/runtime_instance.h
}

namespace chorus::rt {

struct BenchOptions {
  std::vector<std::string> backends;
  std::vector<CollectiveKind> ops;
  std::vector<std::size_t> sizes_bytes;
  int iters = 20;
  int warmup = 5;
  bool check = false;  // verify one result per (backend, op, size, placement) against a local reference
  DType dtype = DType::f32;
  ReduceOp redop = ReduceOp::sum;  // of the reducing operations (nccl-tests' -o)
  int root = 0;                    // of the rooted operations (nccl-tests' -r), 0..world-1
  bool async_op = false;           // issue through the progress queue (async + wait) instead of inline
  // The operations that take algorithms also with every named algorithm of each backend
  // (rt::algorithm_names), as rows of backend "mpi:ring", "gloo:bcube", ...
  bool algorithms = false;
  // Also time each size in place, as nccl-tests does, where the API has an in-place form
  // (selfcheck::has_in_place); the out-of-place run is always timed.
  bool in_place = false;

  // InputError naming the field (iters, warmup) outside 1..kMaxIterations, 0..kMaxIterations,
  // or root below 0; with the runtime initialised, also root >= the world size of a backend.
  void validate() const;
};

// One placement (out of place or in place) of a row.
struct BenchTiming {
  double min_us = 0;      // fastest iteration (slowest rank's time in each iteration)
  double mean_us = 0;     // mean over iterations; what bandwidths and `chorus tune` use
  double max_us = 0;      // slowest iteration
  double algbw_GBps = 0;  // GB/s = 10^9 bytes/s
  double busbw_GBps = 0;
  // With BenchOptions::check: wrong elements summed over the ranks (nccl-tests' #wrong), and
  // "ok" or the first error this rank saw ("failed on N rank(s)" when only others saw one).
  std::int64_t wrong = 0;
  std::string check;
};

struct BenchRow {
  std::string backend;
  CollectiveKind op = CollectiveKind::kAllReduce;
  std::size_t bytes = 0;  // nccl-tests' size (see above)
  std::size_t count = 0;  // the count argument of each call (elements; per rank's block for whole-buffer sizes)
  DType dtype = DType::f32;
  std::optional<ReduceOp> redop;  // the reduction of reducing operations (sum)
  int root = -1;                  // the root of rooted operations, else -1
  int world_size = 1;
  int iters = 0, warmup = 0;
  BenchTiming out_of_place;
  std::optional<BenchTiming> in_place;  // measured with BenchOptions::in_place where the op has the form
};

// Parses an element type as nccl-tests' -d spells it (int8, uint8, int32, int64, half, float,
// double, bfloat16) or as the runtime does (i8, f32, ...); InputError naming `where` otherwise
// (uint32 and uint64, which the runtime does not have, among them).
DType parse_bench_dtype(const std::string& text, const std::string& where);

// Parses the short names of --ops (allreduce, alltoall, ...; "all" for every operation).
std::vector<CollectiveKind> parse_bench_ops(const std::string& text);
std::string bench_op_name(CollectiveKind op);
double bus_factor(CollectiveKind op, int world_size);

// The backend column of every row run_bench makes: each backend, and with
// BenchOptions::algorithms each "backend:algorithm" of each operation (runtime initialised).
std::vector<std::string> bench_backend_names(Runtime& runtime, const BenchOptions& options);
std::vector<std::string> bench_backend_names(const BenchOptions& options);  // on the default runtime

// Collective: every rank must call it with the same options (runtime initialised). `on_row`, when
// given, is called with each row as soon as it is measured (on every rank), before the next.
std::vector<BenchRow> run_bench(Runtime& runtime, const BenchOptions& options,
                                const std::function<void(const BenchRow&)>& on_row = nullptr);
// The same on the default runtime (rt::init's).
std::vector<BenchRow> run_bench(const BenchOptions& options,
                                const std::function<void(const BenchRow&)>& on_row = nullptr);

}  // namespace chorus::rt
