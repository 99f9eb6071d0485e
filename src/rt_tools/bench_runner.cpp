#include "rt_tools/bench_runner.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

#include "core/error.h"
#include "core/split.h"
#include "rt/runtime.h"
#include "rt_tools/selfcheck.h"

namespace chorus::rt {

namespace {

bool whole_buffer_size(OpKind op) {
  switch (op) {
    case OpKind::all_gather: case OpKind::reduce_scatter: case OpKind::gather: case OpKind::scatter:
    case OpKind::all_to_all: case OpKind::all_to_all_single: case OpKind::all_gatherv:
    case OpKind::gatherv: case OpKind::scatterv: case OpKind::all_to_allv:
      return true;
    default:
      return false;
  }
}

// Buffers and one call of `op`, uniform counts for the vector forms.
struct Runner {
  // `backend` may name an all_reduce algorithm ("mpi:ring").
  Runner(const std::string& backend, OpKind op, std::size_t bytes, DType dtype)
      : b(backend), kind(op), d(dtype), n(rt::size(backend)), me(rt::rank(backend)) {
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

  Work call(bool async_op) {
    switch (kind) {
      case OpKind::send: case OpKind::recv: {
        const int peer = me ^ 1;
        if (peer >= n) return Work();
        if (me % 2 == 0) {
          rt::send(b, in.data(), count, d, peer, async_op).wait();
          return rt::recv(b, out.data(), count, d, peer, async_op);
        }
        rt::recv(b, out.data(), count, d, peer, async_op).wait();
        return rt::send(b, in.data(), count, d, peer, async_op);
      }
      case OpKind::barrier: return rt::barrier(b, async_op);
      case OpKind::broadcast: return rt::broadcast(b, out.data(), count, d, 0, async_op);
      case OpKind::reduce: return rt::reduce(b, in.data(), out.data(), count, d, ReduceOp::sum, 0, async_op);
      case OpKind::all_reduce: return rt::all_reduce(b, in.data(), out.data(), count, d, ReduceOp::sum, async_op);
      case OpKind::reduce_scatter: return rt::reduce_scatter(b, in.data(), out.data(), count, d, ReduceOp::sum, async_op);
      case OpKind::all_gather: return rt::all_gather(b, in.data(), out.data(), count, d, async_op);
      case OpKind::gather: return rt::gather(b, in.data(), out.data(), count, d, 0, async_op);
      case OpKind::scatter: return rt::scatter(b, in.data(), out.data(), count, d, 0, async_op);
      case OpKind::all_to_all: return rt::all_to_all(b, ins, counts, outs, counts, d, async_op);
      case OpKind::all_to_all_single: return rt::all_to_all_single(b, in.data(), out.data(), count, d, async_op);
      case OpKind::all_gatherv: return rt::all_gatherv(b, in.data(), count, out.data(), counts, displs, d, async_op);
      case OpKind::gatherv: return rt::gatherv(b, in.data(), count, out.data(), counts, displs, d, 0, async_op);
      case OpKind::scatterv: return rt::scatterv(b, in.data(), counts, displs, out.data(), count, d, 0, async_op);
      case OpKind::all_to_allv: return rt::all_to_allv(b, in.data(), counts, displs, out.data(), counts, displs, d, async_op);
    }
    return Work();
  }

  std::string b;
  OpKind kind;
  DType d;
  int n, me;
  std::size_t count = 0;
  std::vector<char> in, out;
  Counts counts, displs;
  std::vector<const void*> ins;
  std::vector<void*> outs;
};

}  // namespace

std::vector<OpKind> parse_bench_ops(const std::string& text) {
  std::vector<OpKind> ops;
  for (const auto& item : split_list(text)) {
    if (item == "all") {
      for (OpKind o : kAllOpKinds)
        if (o != OpKind::recv) ops.push_back(o);
      continue;
    }
    if (item == "alltoall") {  // nccl-tests' name means the single-buffer form
      ops.push_back(OpKind::all_to_all_single);
      continue;
    }
    if (item == "sendrecv") {
      ops.push_back(OpKind::send);
      continue;
    }
    ops.push_back(parse_op_kind(item, "--ops"));
  }
  if (ops.empty()) throw InputError("--ops", "no operation given");
  return ops;
}

std::string bench_op_name(OpKind op) {
  switch (op) {
    case OpKind::send: case OpKind::recv: return "sendrecv";
    case OpKind::all_to_all_single: return "alltoall";
    case OpKind::all_to_all: return "alltoall_list";
    default: {
      std::string s(to_string(op));
      std::erase(s, '_');
      return s;
    }
  }
}

double bus_factor(OpKind op, int n) {
  const double w = static_cast<double>(n);
  switch (op) {
    case OpKind::all_reduce: return 2.0 * (w - 1) / w;
    case OpKind::broadcast: case OpKind::reduce: case OpKind::send: case OpKind::recv: return 1.0;
    case OpKind::barrier: return 0.0;
    default: return (w - 1) / w;
  }
}

std::vector<BenchRow> run_bench(const BenchOptions& o) {
  if (o.iters < 1) throw InputError("--iters", "must be >= 1");
  if (o.warmup < 0) throw InputError("--warmup", "must be >= 0");
  std::vector<BenchRow> rows;
  for (const auto& plain : o.backends) {
    for (OpKind op : o.ops) {
      std::vector<std::string> candidates = {plain};
      if (o.algorithms)
        for (const auto& a : rt::algorithm_names(plain, op)) candidates.push_back(plain + ":" + a);
      for (const auto& backend : candidates)
      for (std::size_t bytes : o.sizes_bytes) {
        if (op == OpKind::barrier && bytes != o.sizes_bytes.front()) continue;  // size-free
        Runner run(backend, op, op == OpKind::barrier ? 0 : bytes, o.dtype);
        for (int i = 0; i < o.warmup; ++i) run.call(o.async_op).wait();
        rt::barrier(plain);
        std::vector<double> mine(static_cast<std::size_t>(o.iters)), slowest(mine.size());
        for (auto& t : mine) {
          const auto t0 = std::chrono::steady_clock::now();
          run.call(o.async_op).wait();
          t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        }
        rt::all_reduce(plain, mine.data(), slowest.data(), slowest.size(), DType::f64, ReduceOp::max);
        BenchRow row;
        row.backend = backend;
        row.op = op;
        row.world_size = run.n;
        const std::size_t eb = dtype_bytes(o.dtype);
        row.bytes = op == OpKind::barrier ? 0
                    : whole_buffer_size(op) ? run.count * eb * static_cast<std::size_t>(run.n)
                                            : run.count * eb;
        row.min_us = *std::min_element(slowest.begin(), slowest.end());
        row.max_us = *std::max_element(slowest.begin(), slowest.end());
        double sum = 0;
        for (double t : slowest) sum += t;
        row.mean_us = sum / static_cast<double>(slowest.size());
        row.algbw_GBps = row.mean_us > 0 ? static_cast<double>(row.bytes) / (row.mean_us * 1e3) : 0;
        row.busbw_GBps = row.algbw_GBps * bus_factor(op, run.n);
        if (o.check) {
          const std::size_t elems = whole_buffer_size(op) ? run.count : bytes / eb;
          selfcheck::Case c(backend, op == OpKind::recv ? OpKind::send : op, o.dtype, ReduceOp::sum, elems, rows.size());
          c.issue(false);
          std::string err = c.verify();
          // Agree on the verdict: the row fails if any rank saw a wrong element.
          std::int64_t bad = err.empty() ? 0 : 1, any = 0;
          rt::all_reduce(plain, &bad, &any, 1, DType::i64, ReduceOp::sum);
          row.check = any == 0 ? "ok" : (err.empty() ? fmt::format("failed on {} rank(s)", any) : err);
        }
        rows.push_back(row);
      }
    }
  }
  return rows;
}

}  // namespace chorus::rt
