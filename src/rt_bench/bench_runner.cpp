#include "rt_bench/bench_runner.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <fmt/format.h>

#include "core/error.h"
#include "core/memory_budget.h"
#include "core/split.h"
#include "rt/runtime_instance.h"
#include "rt_bench/selfcheck.h"

namespace chorus::rt {

namespace {

// Whether the size of `op` is its whole buffer, all ranks' blocks (nccl-tests' convention).
bool whole_buffer_size(CollectiveKind op) {
  const OpTraits& t = traits(op);
  return t.wide_in || t.wide_out || (t.collective && !t.uniform_count);
}

// Buffers and one call of `op`, uniform counts for the vector forms.
struct Runner {
  // `backend` may name an all_reduce algorithm ("mpi:ring").
  Runner(Runtime& rt, const std::string& backend, CollectiveKind op, std::size_t bytes, DType dtype, ReduceOp redop,
         int root)
      : runtime(rt),
        b(backend),
        kind(op),
        d(dtype),
        rop(redop),
        root_rank(root),
        n(rt.size(backend)),
        me(rt.rank(backend)) {
    const std::size_t eb = dtype_bytes(dtype);
    count = bytes / eb;
    if (whole_buffer_size(op)) count /= static_cast<std::size_t>(n);  // per-rank block
    const std::size_t total = count * static_cast<std::size_t>(n);
    in.assign(std::max(total, count) * eb + 64, 1);
    out.assign(std::max(total, count) * eb + 64, 0);
    counts.assign(n, count);
    for (int j = 0; j < n; ++j) displs.push_back(count * static_cast<std::size_t>(j));
    for (int j = 0; j < n; ++j) {
      ins.push_back(in.data() + count * eb * static_cast<std::size_t>(j));
      outs.push_back(out.data() + count * eb * static_cast<std::size_t>(j));
    }
  }

  Work call(bool async_op, bool in_place) {
    if (kind == CollectiveKind::kSend || kind == CollectiveKind::kRecv) {
      const int peer = me ^ 1;
      if (peer >= n) return Work();
      if (me % 2 == 0) {
        runtime.issue(b, calls::send(in.data(), count, d, peer), async_op).wait();
        return runtime.issue(b, calls::recv(out.data(), count, d, peer), async_op);
      }
      runtime.issue(b, calls::recv(out.data(), count, d, peer), async_op).wait();
      return runtime.issue(b, calls::send(in.data(), count, d, peer), async_op);
    }
    // Every collective from one value: each reads the fields it takes (rt/call.h); only the
    // vector forms carry lists.
    Call c{.op = kind,
           .in = in_place ? in_place_input() : in.data(),
           .out = out.data(),
           .count = count,
           .dtype = d,
           .reduce_op = rop,
           .root = traits(kind).rooted ? root_rank : -1};
    if (!traits(kind).uniform_count)
      c.lists = std::make_shared<const CallLists>(CallLists{.ins = ins,
                                                            .outs = outs,
                                                            .send_counts = counts,
                                                            .send_displs = displs,
                                                            .recv_counts = counts,
                                                            .recv_displs = displs});
    return runtime.issue(b, std::move(c), async_op);
  }

  // Where the in-place form of a selfcheck::has_in_place operation reads (nccl-tests' layouts):
  // the output itself, or this rank's block of it.
  const void* in_place_input() const {
    switch (kind) {
      case CollectiveKind::kAllReduce:
      case CollectiveKind::kReduce:
        return out.data();
      case CollectiveKind::kAllGather:
      case CollectiveKind::kAllGatherv:
        return outs[static_cast<std::size_t>(me)];
      default:
        throw std::logic_error(fmt::format("bench: {} has no in-place form", to_string(kind)));
    }
  }

  Runtime& runtime;
  std::string b;
  CollectiveKind kind;
  DType d;
  ReduceOp rop;
  int root_rank;
  int n, me;
  std::size_t count = 0;
  std::vector<char> in, out;
  Counts counts, displs;
  std::vector<const void*> ins;
  std::vector<void*> outs;
};

// Verifies one more call of run's operation, in place or not as timed, on self-check data;
// every rank learns the wrong elements of all.
void check_call(const Runner& run, const std::string& plain, bool in_place, std::uint64_t salt, BenchTiming& t) {
  selfcheck::Case c(run.runtime, run.b, run.kind == CollectiveKind::kRecv ? CollectiveKind::kSend : run.kind, run.d,
                    run.rop, run.count, salt,
                    in_place ? selfcheck::Placement::kInPlace : selfcheck::Placement::kOutOfPlace, run.root_rank);
  c.issue(false);
  const std::string err = c.verify();
  std::int64_t mine[2] = {static_cast<std::int64_t>(c.wrong_elements()), err.empty() ? 0 : 1}, all[2] = {0, 0};
  run.runtime.issue(plain, calls::all_reduce(mine, all, 2, DType::i64, ReduceOp::sum), false);
  t.wrong = all[0];
  t.check = all[1] == 0 ? "ok" : !err.empty() ? err : fmt::format("failed on {} rank(s)", all[1]);
}

// Times o.iters calls after o.warmup (an iteration's time is the slowest rank's), then, with
// o.check, checks one.
BenchTiming measure(Runner& run, const std::string& plain, const BenchOptions& o, bool in_place, std::size_t bytes,
                    std::uint64_t salt) {
  for (int i = 0; i < o.warmup; ++i) run.call(o.async_op, in_place).wait();
  run.runtime.issue(plain, calls::barrier(), false);
  std::vector<double> mine(static_cast<std::size_t>(o.iters)), slowest(mine.size());
  for (auto& t : mine) {
    const auto t0 = std::chrono::steady_clock::now();
    run.call(o.async_op, in_place).wait();
    t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }
  run.runtime.issue(plain, calls::all_reduce(mine.data(), slowest.data(), slowest.size(), DType::f64, ReduceOp::max),
                    false);
  BenchTiming t;
  t.min_us = *std::min_element(slowest.begin(), slowest.end());
  t.max_us = *std::max_element(slowest.begin(), slowest.end());
  double sum = 0;
  for (double x : slowest) sum += x;
  t.mean_us = sum / static_cast<double>(slowest.size());
  t.algbw_GBps = t.mean_us > 0 ? static_cast<double>(bytes) / (t.mean_us * 1e3) : 0;
  t.busbw_GBps = t.algbw_GBps * bus_factor(run.kind, run.n);
  if (o.check) check_call(run, plain, in_place, salt, t);
  return t;
}

}  // namespace

std::vector<CollectiveKind> parse_bench_ops(const std::string& text) {
  std::vector<CollectiveKind> ops;
  for (const auto& item : split_list(text)) {
    if (item == "all") {
      for (CollectiveKind o : kAllCollectiveKinds)
        if (o != CollectiveKind::kRecv) ops.push_back(o);
      continue;
    }
    if (item == "alltoall") {  // nccl-tests' name means the single-buffer form
      ops.push_back(CollectiveKind::kAllToAllSingle);
      continue;
    }
    if (item == "sendrecv") {
      ops.push_back(CollectiveKind::kSend);
      continue;
    }
    ops.push_back(parse_op_kind(item, "ops"));
  }
  if (ops.empty()) throw InputError("ops", "no operation given");
  return ops;
}

std::string bench_op_name(CollectiveKind op) {
  switch (op) {
    case CollectiveKind::kSend:
    case CollectiveKind::kRecv:
      return "sendrecv";
    case CollectiveKind::kAllToAllSingle:
      return "alltoall";
    case CollectiveKind::kAllToAll:
      return "alltoall_list";
    default: {
      std::string s(to_string(op));
      std::erase(s, '_');
      return s;
    }
  }
}

double bus_factor(CollectiveKind op, int n) {
  const double w = static_cast<double>(n);
  switch (op) {
    case CollectiveKind::kAllReduce:
      return 2.0 * (w - 1) / w;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
    case CollectiveKind::kSend:
    case CollectiveKind::kRecv:
      return 1.0;
    case CollectiveKind::kBarrier:
      return 0.0;
    default:
      return (w - 1) / w;
  }
}

DType parse_bench_dtype(const std::string& text, const std::string& where) {
  // nccl-tests' names (test_typenames) beside the runtime's.
  static const std::pair<const char*, DType> kNcclNames[] = {
      {"int8", DType::i8},     {"uint8", DType::u8},   {"int32", DType::i32},   {"int", DType::i32},
      {"int64", DType::i64},   {"half", DType::f16},   {"float16", DType::f16}, {"float", DType::f32},
      {"float32", DType::f32}, {"double", DType::f64}, {"float64", DType::f64}, {"bfloat16", DType::bf16},
      {"char", DType::i8}};
  for (const auto& [name, d] : kNcclNames)
    if (text == name) return d;
  for (DType d : kAllDTypes)
    if (text == to_string(d)) return d;
  if (text == "uint32" || text == "uint64")
    throw InputError(where, fmt::format("{} is not an element type of the runtime (it has no unsigned type wider "
                                        "than uint8); use int32 or int64",
                                        text));
  throw InputError(where, fmt::format("unknown datatype '{}' (expected one of int8, uint8, int32, int64, half, float, "
                                      "double, bfloat16, or i8, u8, i32, i64, f16, bf16, f32, f64)",
                                      text));
}

void BenchOptions::validate() const {
  require_range(iters, 1, kMaxIterations, "iters");
  require_range(warmup, 0, kMaxIterations, "warmup");
  if (root < 0) throw InputError("root", fmt::format("must be a rank (0 or more), not {}", root));
}

std::vector<std::string> bench_backend_names(const BenchOptions& o) {
  return bench_backend_names(default_runtime("bench"), o);
}

std::vector<std::string> bench_backend_names(Runtime& runtime, const BenchOptions& o) {
  std::vector<std::string> names;
  for (const auto& plain : o.backends) {
    if (std::find(names.begin(), names.end(), plain) == names.end()) names.push_back(plain);
    if (o.algorithms)
      for (CollectiveKind op : o.ops)
        for (const auto& a : runtime.algorithm_names(plain, op)) names.push_back(plain + ":" + a);
  }
  return names;
}

std::vector<BenchRow> run_bench(const BenchOptions& o, const std::function<void(const BenchRow&)>& on_row) {
  return run_bench(default_runtime("bench"), o, on_row);
}

std::vector<BenchRow> run_bench(Runtime& runtime, const BenchOptions& o,
                                const std::function<void(const BenchRow&)>& on_row) {
  o.validate();
  const bool rooted = std::any_of(o.ops.begin(), o.ops.end(), [](CollectiveKind op) { return traits(op).rooted; });
  for (const auto& plain : o.backends)
    if (rooted && o.root >= runtime.size(plain))
      throw InputError("root",
                       fmt::format("rank {} is not a rank of {} ranks ({})", o.root, runtime.size(plain), plain));
  std::vector<BenchRow> rows;
  for (const auto& plain : o.backends) {
    for (CollectiveKind op : o.ops) {
      std::vector<std::string> candidates = {plain};
      if (o.algorithms)
        for (const auto& a : runtime.algorithm_names(plain, op)) candidates.push_back(plain + ":" + a);
      for (const auto& backend : candidates)
        for (std::size_t bytes : o.sizes_bytes) {
          if (op == CollectiveKind::kBarrier && bytes != o.sizes_bytes.front()) continue;  // size-free
          Runner run(runtime, backend, op, op == CollectiveKind::kBarrier ? 0 : bytes, o.dtype, o.redop, o.root);
          BenchRow row;
          row.backend = backend;
          row.op = op;
          row.bytes = run.count * dtype_bytes(o.dtype);  // 0 for barrier
          if (whole_buffer_size(op)) row.bytes *= static_cast<std::size_t>(run.n);
          row.count = run.count;
          row.dtype = o.dtype;
          if (selfcheck::is_reduction(op)) row.redop = o.redop;
          row.root = traits(op).rooted ? o.root : -1;
          row.world_size = run.n;
          row.iters = o.iters;
          row.warmup = o.warmup;
          const std::uint64_t salt = 2 * rows.size();
          row.out_of_place = measure(run, plain, o, false, row.bytes, salt);
          if (o.in_place && selfcheck::has_in_place(op))
            row.in_place = measure(run, plain, o, true, row.bytes, salt + 1);
          rows.push_back(row);
          if (on_row) on_row(rows.back());
        }
    }
  }
  return rows;
}

}  // namespace chorus::rt
