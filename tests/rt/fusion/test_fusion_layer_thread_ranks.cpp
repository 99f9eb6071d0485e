// Tensor fusion as a layer of a communicator (rt/fusion/fusion_layer.cpp), with ranks as threads
// of one process (../backends/thread_ranks.h): a Communicator given a fusion sends the small
// all-reduces through it (Fusion stats: fewer buffers than operations) and every element of every
// result is the sum over the ranks computed here from the formula that fills the inputs (small
// integers: exact in f32); a call larger than B, a compressed one and an operation the fusion does
// not fuse bypass it (the fusion never counts them); a blocking call is fused and waited for, its
// cycle started at once; two worlds in one process, each rank's Runtime with its own fusion, run at
// once; names a fusion cannot serve are refused when the communicator is made.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <cstddef>
#include <exception>
#include <functional>
#include <fmt/format.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "rt/compression/call_compression.h"
#include "rt/fusion/fusion.h"
#include "thread_ranks.h"

namespace chorus::rt {
namespace fusion_layer_tests {

// Rank r's element i of operation k.
float value(int r, int k, std::size_t i) { return static_cast<float>((r + 1) * static_cast<int>(i % 7 + 1) + k % 5); }

// The expected all-reduce (sum) of operation k, element by element, over n ranks.
std::vector<float> expected_sum(int n, int k, std::size_t count) {
  std::vector<float> want(count, 0.0f);
  for (std::size_t i = 0; i < count; ++i)
    for (int q = 0; q < n; ++q) want[i] += value(q, k, i);
  return want;
}

std::vector<float> inputs(int r, int k, std::size_t count) {
  std::vector<float> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = value(r, k, i);
  return v;
}

void expect_sum(const std::vector<float>& got, int n, int k, int r) {
  const auto want = expected_sum(n, k, got.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i])
      throw std::runtime_error(
          fmt::format("rank {}: operation {} element {} is {}, expected {}", r, k, i, got[i], want[i]));
}

constexpr std::size_t kB = 4096;  // B: 1024 f32
constexpr int kSmall = 120;       // small all-reduces of 1-64 elements each

// Many small all-reduces issued asynchronously on `comm` (given `fusion`), with a large one in
// the middle (past B: it bypasses) and a compressed one: fused, and exact.
void small_all_reduces(const Communicator& comm, const Fusion& fusion, int r, int n) {
  std::vector<std::vector<float>> data(kSmall);
  std::vector<Work> works;
  std::vector<float> large = inputs(r, 7, 3000);  // 12000 bytes > B
  Work large_work;
  for (int k = 0; k < kSmall; ++k) {
    data[static_cast<std::size_t>(k)] = inputs(r, k, static_cast<std::size_t>(1 + k % 64));
    auto& d = data[static_cast<std::size_t>(k)];
    works.push_back(comm.issue(calls::all_reduce(d.data(), d.data(), d.size(), DType::f32, ReduceOp::sum), true));
    if (k == kSmall / 2)
      large_work =
          comm.issue(calls::all_reduce(large.data(), large.data(), large.size(), DType::f32, ReduceOp::sum), true);
  }
  for (auto& w : works) w.wait();
  large_work.wait();
  for (int k = 0; k < kSmall; ++k) expect_sum(data[static_cast<std::size_t>(k)], n, k, r);
  expect_sum(large, n, 7, r);
  const auto s = fusion.stats();
  // Exactly the small ones went through the fusion, in fewer buffers than operations.
  if (s.ops != static_cast<std::uint64_t>(kSmall) || s.buffers >= s.ops || s.buffers == 0)
    throw std::runtime_error(
        fmt::format("rank {}: the fusion counted {} operations in {} buffers, expected {} operations in fewer buffers",
                    r, s.ops, s.buffers, kSmall));
  // Neither a barrier (not fused) nor an empty all-reduce's bypass changes that; a barrier still runs.
  comm.issue(calls::barrier());
  if (fusion.stats().ops != static_cast<std::uint64_t>(kSmall))
    throw std::runtime_error(fmt::format("rank {}: a barrier went through the fusion", r));
}

struct Case {
  std::string backend;
  int n;
};

class FusionLayer : public ::testing::TestWithParam<Case> {};

TEST_P(FusionLayer, SmallAsyncAllReducesAreFusedAndExactALargeOneBypasses) {
  const auto [backend, n] = GetParam();
  testing::spawn(n, {backend}, [&](Runtime& runtime, int r) {
    Fusion& fusion = runtime.add_fusion({backend}, {.buffer_bytes = kB, .cycle_us = 200});
    const Communicator comm = runtime.communicator(backend, fusion);
    if (comm.fusion() != &fusion || comm.size() != n || comm.rank() != r)
      throw std::runtime_error(fmt::format("rank {}: the communicator does not show its fusion, size or rank", r));
    small_all_reduces(comm, fusion, r, n);
  });
}

// A blocking call the fusion takes is fused and waited for; its cycle starts at once, not T
// (here 5 s) after it arrived. Ranks that issue the same call, one blocking and the others
// asynchronously, still match.
TEST_P(FusionLayer, BlockingCallsAreFusedAndStartTheirCycleAtOnce) {
  const auto [backend, n] = GetParam();
  testing::spawn(n, {backend}, [&](Runtime& runtime, int r) {
    const Communicator slow = runtime.communicator(backend, FusionOptions{.buffer_bytes = kB, .cycle_us = 5'000'000});
    std::vector<float> d = inputs(r, 3, 10);
    const auto t0 = std::chrono::steady_clock::now();
    Work w = slow.issue(calls::all_reduce(d.data(), d.data(), d.size(), DType::f32, ReduceOp::sum));  // blocking
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!w.test()) throw std::runtime_error(fmt::format("rank {}: a blocking fused call returned unfinished", r));
    expect_sum(d, n, 3, r);
    if (slow.fusion()->stats().ops != 1) throw std::runtime_error(fmt::format("rank {}: the call was not fused", r));
    if (s > 2.5) throw std::runtime_error(fmt::format("rank {}: a blocking fused call took {:.2f} s (T = 5 s)", r, s));
    const Communicator quick = runtime.communicator(backend, FusionOptions{.buffer_bytes = kB, .cycle_us = 200});
    std::vector<float> e = inputs(r, 4, 33);
    quick.issue(calls::all_reduce(e.data(), e.data(), e.size(), DType::f32, ReduceOp::sum), /*async_op=*/r != 0).wait();
    expect_sum(e, n, 4, r);
    if (quick.fusion()->stats().ops != 1) throw std::runtime_error(fmt::format("rank {}: the call was not fused", r));
  });
}

// The layers in order: a compression policy first (it names all_reduce: a float sum or average
// travels compressed, within its bound, and is then not fused; a maximum or integers run
// exactly), then the fusion (what the policy left uncompressed and small). A group and "auto"
// take a compression policy too.
TEST_P(FusionLayer, CompressionPolicyFirstThenFusion) {
  const auto [backend, n] = GetParam();
  testing::spawn(n, {backend}, [&](Runtime& runtime, int r) {
    auto policy = std::make_shared<CompressionPolicy>();
    const compressed::ErrorBound bound{compressed::ErrorBound::Kind::kAbsolute, 1e-3};
    policy->bounds[static_cast<std::size_t>(CollectiveKind::kAllReduce)] = bound;
    Fusion& fusion = runtime.add_fusion({backend}, {.buffer_bytes = kB, .cycle_us = 200});
    const Communicator comm = runtime.communicator(backend, CommunicatorLayers{policy, &fusion});
    const std::size_t count = 100;
    std::vector<float> sum = inputs(r, 1, count), top = inputs(r, 2, count);
    std::vector<std::int32_t> ints(count);
    for (std::size_t i = 0; i < count; ++i) ints[i] = static_cast<std::int32_t>(value(r, 3, i));
    std::vector<Work> works;
    works.push_back(comm.issue(calls::all_reduce(sum.data(), sum.data(), count, DType::f32, ReduceOp::sum), true));
    works.push_back(comm.issue(calls::all_reduce(top.data(), top.data(), count, DType::f32, ReduceOp::max), true));
    works.push_back(comm.issue(calls::all_reduce(ints.data(), ints.data(), count, DType::i32, ReduceOp::sum), true));
    for (auto& w : works) w.wait();
    // Compressed: within the bound plus the rounding of the n - 1 float additions (as
    // tests/rt/compression derives it), and counted by the policy; not fused.
    for (std::size_t i = 0; i < count; ++i) {
      double exact = 0, magnitude = 0;
      for (int q = 0; q < n; ++q) {
        exact += value(q, 1, i);
        magnitude += std::fabs(value(q, 1, i));
      }
      const double allowed = bound.value + n * 1.2e-7 * (magnitude + bound.value);
      if (std::fabs(sum[i] - exact) > allowed)
        throw std::runtime_error(fmt::format("rank {}: compressed element {} is {}, exact {}", r, i, sum[i], exact));
      float want_top = value(0, 2, i), want_int = 0;
      for (int q = 0; q < n; ++q) {
        want_top = std::max(want_top, value(q, 2, i));
        want_int += value(q, 3, i);
      }
      if (top[i] != want_top || static_cast<float>(ints[i]) != want_int)
        throw std::runtime_error(fmt::format("rank {}: element {}: max {} (expected {}), integer sum {} (expected {})",
                                             r, i, top[i], want_top, ints[i], want_int));
    }
    const auto sent = policy->totals.get();
    const std::uint64_t fused = fusion.stats().ops;
    if ((n > 1 && sent.raw_bytes == 0) || fused != 2)
      throw std::runtime_error(
          fmt::format("rank {}: {} raw bytes compressed, {} operations fused (expected 2)", r, sent.raw_bytes, fused));
    // A group and "auto" with the policy alone.
    runtime.split("everyone", backend, 0, r);
    for (const char* name : {"everyone", "auto"}) {
      const Communicator plain = runtime.communicator(name, CommunicatorLayers{policy, nullptr});
      std::vector<float> x = inputs(r, 4, count);
      plain.issue(calls::all_reduce(x.data(), x.data(), count, DType::f32, ReduceOp::sum));
      if (n > 1 && policy->totals.get().raw_bytes <= sent.raw_bytes)
        throw std::runtime_error(fmt::format("rank {}: communicator '{}' did not compress", r, name));
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Backends, FusionLayer,
                         ::testing::Values(Case{"shm", 1}, Case{"shm", 2}, Case{"shm", 3}, Case{"shm", 4},
                                           Case{"gloo", 1}, Case{"gloo", 2}, Case{"gloo", 3}, Case{"gloo", 4}),
                         [](const auto& p) { return fmt::format("{}_{}ranks", p.param.backend, p.param.n); });

// Two worlds in one process at once (shm on 3 ranks, gloo on 2), every rank's Runtime with its
// own fusion: each fuses its own operations, exactly, and counts only those.
TEST(FusionLayerTwoWorlds, EachRuntimeWithItsOwnFusionAtOnce) {
  std::exception_ptr errors[2];
  std::thread worlds[2];
  const Case cases[2] = {{"shm", 3}, {"gloo", 2}};
  for (int w = 0; w < 2; ++w)
    worlds[w] = std::thread([&, w] {
      try {
        const auto [backend, n] = cases[w];
        testing::spawn(n, {backend}, [&](Runtime& runtime, int r) {
          Fusion& fusion = runtime.add_fusion({backend}, {.buffer_bytes = kB, .cycle_us = 100 + 200 * w});
          small_all_reduces(runtime.communicator(backend, fusion), fusion, r, n);
        });
      } catch (...) {
        errors[w] = std::current_exception();
      }
    });
  for (auto& t : worlds) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

// The one rule (Fusion::takes), and "auto": the fusion on every backend chooses per fused buffer,
// the other calls choose per call. Names a fusion cannot serve are refused when the communicator
// is made.
TEST(FusionLayerRule, WhatTheFusionTakesAndWhatItRefuses) {
  testing::spawn(2, {"shm", "gloo"}, [&](Runtime& runtime, int r) {
    Fusion& shm_only = runtime.add_fusion({"shm"}, {.buffer_bytes = kB, .cycle_us = 200});
    float x[2048] = {};
    const auto small = calls::all_reduce(x, x, 1024, DType::f32, ReduceOp::sum);  // B exactly
    const auto big = calls::all_reduce(x, x, 1025, DType::f32, ReduceOp::sum);
    const Counts large_blocks(2, 4096), displs = {0, 4096};
    const bool takes[] = {
        shm_only.takes(small),
        shm_only.takes(big),
        shm_only.takes(compressed_call(small, {compressed::ErrorBound::Kind::kAbsolute, 1e-3})),
        shm_only.takes(calls::all_to_allv(x, large_blocks, displs, x, large_blocks, displs, DType::f32)),
        shm_only.takes(calls::send(x, 4, DType::f32, 1 - r)),
        shm_only.takes(calls::barrier()),
        shm_only.takes(calls::broadcast(x, 16, DType::f64, 0))};
    const bool want[] = {true, false, false, true, false, false, true};
    for (std::size_t i = 0; i < std::size(want); ++i)
      if (takes[i] != want[i]) throw std::runtime_error(fmt::format("rank {}: takes() case {} is {}", r, i, takes[i]));
    runtime.split("pairs", "shm", 0, r);
    const std::string group = input_error_of([&] { runtime.communicator("pairs", shm_only); });
    const std::string other = input_error_of([&] { runtime.communicator("gloo", shm_only); });
    const std::string any = input_error_of([&] { runtime.communicator("auto", shm_only); });
    if (group.find("not on a group") == std::string::npos || other.find("not on backend 'gloo'") == std::string::npos ||
        any.find("'auto' may choose backend 'gloo'") == std::string::npos)
      throw std::runtime_error(fmt::format("rank {}: refusals: '{}' / '{}' / '{}'", r, group, other, any));
    const Communicator automatic = runtime.communicator("auto", FusionOptions{.buffer_bytes = kB, .cycle_us = 200});
    if (automatic.name() != "auto" || automatic.resolve(CollectiveKind::kAllReduce) != "auto")
      throw std::runtime_error(fmt::format("rank {}: the auto communicator is named '{}'", r, automatic.name()));
    small_all_reduces(automatic, *automatic.fusion(), r, 2);
  });
}

}  // namespace fusion_layer_tests
}  // namespace chorus::rt
