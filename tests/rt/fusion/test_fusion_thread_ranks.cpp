// Tensor fusion (rt/fusion) with ranks as threads of one process (../backends/thread_ranks.h),
// each rank's Fusions built on its own Runtime: on shm and gloo at 1-4 ranks, a seeded mix of
// every operation fusion takes (all-reduce, broadcast, all-gather, reduce-scatter, all-to-all of
// equal and of uneven blocks, reduce, gather, scatter), counts from 0 to past B (run alone),
// submitted to two Fusions per rank at once; every element of every result is checked against a
// reference computed here from the formula that fills the inputs (small integers: exact in f32).
// The two Fusions of a runtime, and the runtimes of the process, name their groups by the
// runtime's own count of instances: with one count per process the ranks' groups would differ.
#include <gtest/gtest.h>

#include <cstddef>
#include <fmt/format.h>
#include <random>
#include <string>
#include <vector>

#include "rt/fusion/fusion.h"
#include "thread_ranks.h"

namespace chorus::rt {
namespace {

// Rank r's element i of operation k.
float value(int r, int k, std::size_t i) { return static_cast<float>((r + 1) * static_cast<int>(i % 7 + 1) + k % 5); }

enum class Op { kAllReduce, kBroadcast, kAllGather, kReduceScatter, kAllToAll, kAllToAllv, kReduce, kGather, kScatter };
constexpr int kOps = 9;

// One operation as every rank draws it (the same seed on every rank).
struct Planned {
  Op op;
  std::size_t count;  // per rank (an uneven all-to-all's unit)
  int root;
  int fusion;  // which of the rank's two Fusions
};

std::vector<Planned> plan(int n, unsigned seed, int how_many) {
  std::mt19937 rng(seed);
  const std::size_t counts[] = {0, 1, 7, 100, 1500};  // 1500 f32 = 6000 bytes: past B = 4 KiB
  std::vector<Planned> out;
  for (int k = 0; k < how_many; ++k)
    out.push_back({static_cast<Op>(rng() % kOps), counts[rng() % 5], static_cast<int>(rng() % static_cast<unsigned>(n)),
                   static_cast<int>(rng() % 2)});
  return out;
}

// Uneven all-to-all: rank `src` sends rank `dst` this many units.
std::size_t units(int src, int dst) { return 1 + static_cast<std::size_t>((src + dst) % 3); }

// An operation's buffers on one rank, filled, and the check of its result.
struct Running {
  Planned p;
  int k;
  std::vector<float> in, out;
  std::vector<std::size_t> send_counts, send_displs, recv_counts, recv_displs;
  Work work;
};

Running start(Fusion& f, const std::string& backend, const Planned& p, int k, int r, int n) {
  Running x{p, k, {}, {}, {}, {}, {}, {}, {}};
  const std::size_t c = p.count, N = static_cast<std::size_t>(n);
  auto fill = [&](std::size_t len, auto element) {
    x.in.resize(len);
    for (std::size_t i = 0; i < len; ++i) x.in[i] = element(i);
  };
  switch (p.op) {
    case Op::kAllReduce:
      fill(c, [&](std::size_t i) { return value(r, k, i); });
      x.out.assign(c, -1);
      x.work = f.all_reduce(backend, x.in.data(), x.out.data(), c, DType::f32, ReduceOp::sum);
      break;
    case Op::kBroadcast:
      fill(c, [&](std::size_t i) { return r == p.root ? value(r, k, i) : -1.0f; });
      x.work = f.broadcast(backend, x.in.data(), c, DType::f32, p.root);
      break;
    case Op::kAllGather:
      fill(c, [&](std::size_t i) { return value(r, k, i); });
      x.out.assign(N * c, -1);
      x.work = f.all_gather(backend, x.in.data(), x.out.data(), c, DType::f32);
      break;
    case Op::kReduceScatter:
      fill(N * c, [&](std::size_t i) { return value(r, k, i); });
      x.out.assign(c, -1);
      x.work = f.reduce_scatter(backend, x.in.data(), x.out.data(), c, DType::f32, ReduceOp::sum);
      break;
    case Op::kAllToAll:
      fill(N * c, [&](std::size_t i) { return value(r, k, i); });
      x.out.assign(N * c, -1);
      x.work = f.all_to_all_single(backend, x.in.data(), x.out.data(), c, DType::f32);
      break;
    case Op::kAllToAllv: {
      std::size_t sent = 0, received = 0;
      for (int j = 0; j < n; ++j) {
        x.send_displs.push_back(sent);
        x.send_counts.push_back(units(r, j) * c);
        sent += units(r, j) * c;
        x.recv_displs.push_back(received);
        x.recv_counts.push_back(units(j, r) * c);
        received += units(j, r) * c;
      }
      x.in.resize(sent);
      for (int j = 0; j < n; ++j)
        for (std::size_t t = 0; t < x.send_counts[static_cast<std::size_t>(j)]; ++t)
          x.in[x.send_displs[static_cast<std::size_t>(j)] + t] = value(r, k, 1000 * static_cast<std::size_t>(j) + t);
      x.out.assign(received, -1);
      x.work = f.all_to_allv(backend, x.in.data(), x.send_counts, x.send_displs, x.out.data(), x.recv_counts,
                             x.recv_displs, DType::f32);
      break;
    }
    case Op::kReduce:
      fill(c, [&](std::size_t i) { return value(r, k, i); });
      x.out.assign(c, -1);
      x.work = f.reduce(backend, x.in.data(), x.out.data(), c, DType::f32, ReduceOp::sum, p.root);
      break;
    case Op::kGather:
      fill(c, [&](std::size_t i) { return value(r, k, i); });
      x.out.assign(N * c, -1);
      x.work = f.gather(backend, x.in.data(), x.out.data(), c, DType::f32, p.root);
      break;
    case Op::kScatter:
      fill(N * c, [&](std::size_t i) { return r == p.root ? value(r, k, i) : -1.0f; });
      x.out.assign(c, -1);
      x.work = f.scatter(backend, x.in.data(), x.out.data(), c, DType::f32, p.root);
      break;
  }
  return x;
}

// The first element of `x`'s result on rank r that differs from the reference, or "".
std::string first_wrong(const Running& x, int r, int n) {
  const std::size_t c = x.p.count, N = static_cast<std::size_t>(n);
  const int k = x.k;
  auto sum = [&](std::size_t i) {
    float s = 0;
    for (int q = 0; q < n; ++q) s += value(q, k, i);
    return s;
  };
  std::vector<float> want;
  const std::vector<float>* got = &x.out;
  switch (x.p.op) {
    case Op::kAllReduce:
      for (std::size_t i = 0; i < c; ++i) want.push_back(sum(i));
      break;
    case Op::kBroadcast:
      for (std::size_t i = 0; i < c; ++i) want.push_back(value(x.p.root, k, i));
      got = &x.in;
      break;
    case Op::kAllGather:
      for (std::size_t j = 0; j < N; ++j)
        for (std::size_t i = 0; i < c; ++i) want.push_back(value(static_cast<int>(j), k, i));
      break;
    case Op::kReduceScatter:
      for (std::size_t i = 0; i < c; ++i) want.push_back(sum(static_cast<std::size_t>(r) * c + i));
      break;
    case Op::kAllToAll:
      for (std::size_t j = 0; j < N; ++j)
        for (std::size_t i = 0; i < c; ++i)
          want.push_back(value(static_cast<int>(j), k, static_cast<std::size_t>(r) * c + i));
      break;
    case Op::kAllToAllv:
      for (int j = 0; j < n; ++j)
        for (std::size_t t = 0; t < units(j, r) * c; ++t)
          want.push_back(value(j, k, 1000 * static_cast<std::size_t>(r) + t));
      break;
    case Op::kReduce:
      if (r != x.p.root) return "";
      for (std::size_t i = 0; i < c; ++i) want.push_back(sum(i));
      break;
    case Op::kGather:
      if (r != x.p.root) return "";
      for (std::size_t j = 0; j < N; ++j)
        for (std::size_t i = 0; i < c; ++i) want.push_back(value(static_cast<int>(j), k, i));
      break;
    case Op::kScatter:
      for (std::size_t i = 0; i < c; ++i) want.push_back(value(x.p.root, k, static_cast<std::size_t>(r) * c + i));
      break;
  }
  if (got->size() != want.size()) return fmt::format("{} elements, expected {}", got->size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    if ((*got)[i] != want[i]) return fmt::format("element {} is {}, expected {}", i, (*got)[i], want[i]);
  return "";
}

struct Case {
  std::string backend;
  int n;
};

class FusionThreadRanks : public ::testing::TestWithParam<Case> {};

TEST_P(FusionThreadRanks, EveryElementOfEveryFusedOperation) {
  const auto [backend, n] = GetParam();
  const auto ops = plan(n, 20261129u + static_cast<unsigned>(n), 90);
  testing::spawn(n, {backend}, [&](Runtime& runtime, int r) {
    Fusion a(runtime, {backend}, {.buffer_bytes = 4096, .cycle_us = 100});
    Fusion b(runtime, {"auto"}, {.buffer_bytes = 1 << 16, .cycle_us = 300});
    std::vector<Running> running;
    for (int k = 0; k < static_cast<int>(ops.size()); ++k)
      running.push_back(start(ops[static_cast<std::size_t>(k)].fusion == 0 ? a : b,
                              ops[static_cast<std::size_t>(k)].fusion == 0 ? backend : "auto",
                              ops[static_cast<std::size_t>(k)], k, r, n));
    for (auto& x : running) x.work.wait();
    for (const auto& x : running) {
      const std::string wrong = first_wrong(x, r, n);
      if (!wrong.empty())
        throw std::runtime_error(fmt::format("rank {}: operation {} (kind {}, count {}, root {}): {}", r, x.k,
                                             static_cast<int>(x.p.op), x.p.count, x.p.root, wrong));
    }
    // Every operation that moves data counted (an empty one completes at its submission); the
    // small ones shared fused buffers: fewer operations issued than submitted.
    std::size_t moving = 0;
    for (const auto& p : ops) moving += p.count > 0;
    const auto sa = a.stats(), sb = b.stats();
    if (sa.ops + sb.ops < moving || sa.ops + sb.ops > ops.size() || sa.buffers + sb.buffers >= sa.ops + sb.ops)
      throw std::runtime_error(
          fmt::format("rank {}: {} + {} operations counted ({} move data, {} submitted), {} + {} "
                      "buffers issued",
                      r, sa.ops, sb.ops, moving, ops.size(), sa.buffers, sb.buffers));
  });
}

INSTANTIATE_TEST_SUITE_P(Backends, FusionThreadRanks,
                         ::testing::Values(Case{"shm", 1}, Case{"shm", 2}, Case{"shm", 3}, Case{"shm", 4},
                                           Case{"gloo", 1}, Case{"gloo", 2}, Case{"gloo", 3}, Case{"gloo", 4}),
                         [](const auto& p) { return fmt::format("{}_{}ranks", p.param.backend, p.param.n); });

}  // namespace
}  // namespace chorus::rt
