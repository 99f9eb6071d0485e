// Compression as an option of a call (rt/compression/call_compression.h), ranks as threads
// (../backends/thread_ranks.h) on shm and gloo: every operation with a compressed form stays within its
// error bound of a reference computed here in double, all_gather and all_reduce give bitwise
// the same result on every rank, the bytes "sent uncompressed" are what the operation moves
// (worked out by hand below), and ranks that disagree on the bound, or on compressing at all,
// fail together before any data moves.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <fmt/format.h>
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "rt/compression/call_compression.h"
#include "rt/compression/compressor.h"
#include "rt/errors.h"
#include "thread_ranks.h"

namespace chorus::rt {
namespace {

using compressed::ErrorBound;
using compressed::Stats;

// Rank r's element i: smooth, so that zfp has something to gain, and different on every rank.
double v(int r, std::size_t i) { return 10.0 * std::sin(0.05 * static_cast<double>(i) + r) + r; }
// Rank `src`'s block for rank `dst` in an all-to-all.
double w(int src, int dst, std::size_t i) { return v(src, i) + 0.5 * dst; }

template <typename T>
std::vector<T> fill(std::size_t n, int r) {
  std::vector<T> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<T>(v(r, i));
  return x;
}

// The largest |got[i] - want(i)| over the elements where it exceeds tol(i), or 0 if none does.
template <typename T, typename Want, typename Tol>
double worst_miss(const T* got, std::size_t n, const Want& want, const Tol& tol) {
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - want(i));
    if (err > tol(i)) worst = std::max(worst, err);
  }
  return worst;
}

struct Case {
  std::string backend;
  int n;
};

class CompressedCalls : public ::testing::TestWithParam<Case> {};

template <typename T>
void check_operations(Runtime& rt, const std::string& b, int r, int n, std::size_t count, std::vector<T>& reduced,
                      std::vector<T>& gathered) {
  const DType dt = sizeof(T) == 4 ? DType::f32 : DType::f64;
  const ErrorBound bound{ErrorBound::Kind::kAbsolute, 1e-3};
  const double eps = sizeof(T) == 4 ? 1.2e-7 : 2.3e-16;
  const std::string at = fmt::format("rank {} of {} on {}, {} x {}", r, n, b, count, to_string(dt));
  const auto P = static_cast<std::size_t>(n);

  // all_reduce, sum and avg: within the bound (avg: bound / n) of the exact result, plus the
  // rounding of the n - 1 float additions of partial sums.
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg}) {
    std::vector<T> x = fill<T>(count, r);
    Stats st;
    rt.issue(b, compressed_call(calls::all_reduce(x.data(), x.data(), count, dt, op), bound, &st), false);
    const double scale = op == ReduceOp::avg ? 1.0 / n : 1.0;
    const double miss = worst_miss(
        x.data(), count,
        [&](std::size_t i) {
          double s = 0;
          for (int q = 0; q < n; ++q) s += v(q, i);
          return s * scale;
        },
        [&](std::size_t i) {
          double mag = 0;
          for (int q = 0; q < n; ++q) mag += std::fabs(v(q, i));
          return (bound.value + n * eps * (mag + bound.value)) * scale;
        });
    EXPECT_EQ(miss, 0.0) << at << ": compressed all_reduce " << to_string(op) << " misses its bound";
    // Every block is sent once (the ring sends every block but this rank's, the all-gather
    // this rank's): what an uncompressed all-reduce of the same ring would send.
    if (n > 1) {
      EXPECT_EQ(st.raw_bytes, count * sizeof(T)) << at;
    }
    if (op == ReduceOp::sum) reduced = x;
  }

  // all_gather: block j within the bound of rank j's data.
  {
    const std::vector<T> x = fill<T>(count, r);
    std::vector<T> out(P * count, T(-1));
    Stats st;
    rt.issue(b, compressed_call(calls::all_gather(x.data(), out.data(), count, dt), bound, &st), false);
    for (int j = 0; j < n; ++j)
      EXPECT_EQ(worst_miss(
                    out.data() + static_cast<std::size_t>(j) * count, count, [&](std::size_t i) { return v(j, i); },
                    [&](std::size_t) { return bound.value; }),
                0.0)
          << at << ": compressed all_gather, block " << j;
    if (n > 1) {
      EXPECT_EQ(st.raw_bytes, count * sizeof(T)) << at;
    }
    gathered = out;
  }

  // all_to_all_single: block j from rank j within the bound; this rank's own block exact.
  {
    std::vector<T> in(P * count), out(P * count, T(-1));
    for (int j = 0; j < n; ++j)
      for (std::size_t i = 0; i < count; ++i) in[static_cast<std::size_t>(j) * count + i] = static_cast<T>(w(r, j, i));
    Stats st;
    rt.issue(b, compressed_call(calls::all_to_all_single(in.data(), out.data(), count, dt), bound, &st), false);
    for (int j = 0; j < n; ++j)
      EXPECT_EQ(worst_miss(
                    out.data() + static_cast<std::size_t>(j) * count, count,
                    [&](std::size_t i) { return static_cast<double>(static_cast<T>(w(j, r, i))); },
                    [&](std::size_t) { return j == r ? 0.0 : bound.value; }),
                0.0)
          << at << ": compressed all_to_all_single, block from " << j;
    EXPECT_EQ(st.raw_bytes, (P - 1) * count * sizeof(T)) << at;
  }

  // send / recv around the ring.
  if (n > 1) {
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    const std::vector<T> x = fill<T>(count, r);
    std::vector<T> got(count, T(-1));
    Stats sent, received;
    Work s = rt.issue(b, compressed_call(calls::send(x.data(), count, dt, next), bound, &sent), true);
    Work q = rt.issue(b, compressed_call(calls::recv(got.data(), count, dt, prev), bound, &received), true);
    s.wait();
    q.wait();
    EXPECT_EQ(
        worst_miss(
            got.data(), count, [&](std::size_t i) { return v(prev, i); }, [&](std::size_t) { return bound.value; }),
        0.0)
        << at << ": compressed send / recv";
    EXPECT_EQ(sent.raw_bytes, count * sizeof(T)) << at;
    EXPECT_EQ(received.raw_bytes + received.wire_bytes, 0u) << at << ": a receive sends nothing";
    // 1000 smooth values under 1e-3: the blocks are smaller than the data, size messages included.
    if (count >= 1000) {
      EXPECT_LT(sent.wire_bytes, sent.raw_bytes) << at;
    }
  }
}

TEST_P(CompressedCalls, EveryCompressedFormStaysWithinItsBoundAndRanksGetTheSameBits) {
  const Case c = GetParam();
  for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
    std::vector<std::vector<float>> reduced(static_cast<std::size_t>(c.n)), gathered(reduced.size());
    std::vector<std::vector<double>> reduced64(reduced.size()), gathered64(reduced.size());
    testing::spawn(c.n, {c.backend}, [&](Runtime& rt, int r) {
      const auto me = static_cast<std::size_t>(r);
      check_operations<float>(rt, c.backend, r, c.n, count, reduced[me], gathered[me]);
      check_operations<double>(rt, c.backend, r, c.n, count, reduced64[me], gathered64[me]);
    });
    for (int r = 1; r < c.n; ++r) {
      const auto q = static_cast<std::size_t>(r);
      EXPECT_EQ(reduced[q], reduced[0]) << c.backend << ", " << count << " x f32: rank " << r << "'s all_reduce";
      EXPECT_EQ(gathered[q], gathered[0]) << c.backend << ", " << count << " x f32: rank " << r << "'s all_gather";
      EXPECT_EQ(reduced64[q], reduced64[0]) << c.backend << ", " << count << " x f64: rank " << r << "'s all_reduce";
      EXPECT_EQ(gathered64[q], gathered64[0]) << c.backend << ", " << count << " x f64: rank " << r << "'s all_gather";
    }
  }
}

// A call with no compressed form, or of integers, is refused before anything is sent.
TEST_P(CompressedCalls, CallsWithoutACompressedFormAreRefusedNamingWhy) {
  const Case c = GetParam();
  testing::spawn(c.n, {c.backend}, [&](Runtime& rt, int) {
    const ErrorBound bound{ErrorBound::Kind::kAbsolute, 1e-3};
    std::vector<float> x(4, 1.0f);
    std::vector<std::int32_t> k(4, 1);
    const auto refusal = [&](Call call) {
      try {
        rt.issue(c.backend, compressed_call(std::move(call), bound), false);
      } catch (const InputError& e) {
        return std::string(e.what());
      }
      return std::string("accepted");
    };
    EXPECT_NE(
        refusal(calls::broadcast(x.data(), 4, DType::f32, 0)).find("compressed::broadcast: has no compressed form"),
        std::string::npos);
    EXPECT_NE(refusal(calls::all_reduce(k.data(), k.data(), 4, DType::i32, ReduceOp::sum))
                  .find("dtype i32 cannot be compressed"),
              std::string::npos);
    EXPECT_NE(refusal(calls::all_reduce(x.data(), x.data(), 4, DType::f32, ReduceOp::max))
                  .find("reduce op max is not supported"),
              std::string::npos);
  });
}

// Rank 0 compresses under 1e-3, the others under 1e-2: every rank fails naming its bound, and no
// data moves. Then rank 0 runs the plain all-reduce where the others compress: every rank fails.
TEST_P(CompressedCalls, RanksThatDisagreeOnTheBoundFailTogether) {
  const Case c = GetParam();
  if (c.n < 2) GTEST_SKIP() << "one rank cannot disagree";
  testing::spawn(c.n, {c.backend}, [&](Runtime& rt, int r) {
    std::vector<float> x(100, 1.0f);
    const ErrorBound mine{ErrorBound::Kind::kAbsolute, r == 0 ? 1e-3 : 1e-2};
    std::string error;
    try {
      rt.issue(c.backend,
               compressed_call(calls::all_reduce(x.data(), x.data(), x.size(), DType::f32, ReduceOp::sum), mine),
               false);
    } catch (const DisagreementError& e) {
      error = e.what();
    }
    EXPECT_NE(error.find(fmt::format("all_reduce on rank {}: ranks disagree", r)), std::string::npos) << error;
    EXPECT_NE(error.find(r == 0 ? "compressed under abs:0.001" : "compressed under abs:0.01"), std::string::npos)
        << error;
    EXPECT_EQ(x, std::vector<float>(100, 1.0f)) << "rank " << r << ": no data moved";
  });
  testing::spawn(c.n, {c.backend}, [&](Runtime& rt, int r) {
    std::vector<float> x(100, 1.0f);
    Call call = calls::all_reduce(x.data(), x.data(), x.size(), DType::f32, ReduceOp::sum);
    if (r != 0) call = compressed_call(std::move(call), {ErrorBound::Kind::kAbsolute, 1e-3});
    EXPECT_THROW(rt.issue(c.backend, std::move(call), false), DisagreementError) << "rank " << r;
  });
}

// The Compressor on each rank's own Runtime: two per rank, made in the same order on every
// rank, each on a group named by its runtime's count of Compressors (one count per process would
// give the thread ranks different groups); asynchronous all-reduces and all-gathers on both at
// once, beside a plain all-reduce of the program on the backend itself, each within its bound
// of the exact result, and the two Compressors' totals counting their own calls only.
TEST_P(CompressedCalls, TwoCompressorsPerRuntimeBesideTheProgramsOwnOperations) {
  const Case c = GetParam();
  const std::size_t count = 1000;
  testing::spawn(c.n, {c.backend}, [&](Runtime& rt, int r) {
    const ErrorBound bound{ErrorBound::Kind::kAbsolute, 1e-3};
    compressed::Compressor first(rt, c.backend), second(rt, c.backend);
    if (first.group() == second.group()) throw std::runtime_error("two Compressors on one group: " + first.group());
    std::vector<float> x = fill<float>(count, r), y = fill<float>(count, r), plain = fill<float>(count, r);
    std::vector<float> gathered(static_cast<std::size_t>(c.n) * count, -1.0f);
    Work a = first.all_reduce(x.data(), x.data(), count, DType::f32, ReduceOp::sum, bound);
    Work g = second.all_gather(y.data(), gathered.data(), count, DType::f32, bound);
    rt.issue(c.backend, calls::all_reduce(plain.data(), plain.data(), count, DType::f32, ReduceOp::sum), false);
    a.wait();
    g.wait();
    const auto exact = [&](std::size_t i) {
      double s = 0;
      for (int q = 0; q < c.n; ++q) s += v(q, i);
      return s;
    };
    const auto tol = [&](std::size_t i) { return bound.value + c.n * 1.2e-7 * (std::fabs(exact(i)) + 10.0 * c.n); };
    EXPECT_EQ(worst_miss(x.data(), count, exact, tol), 0.0) << "rank " << r << ": the Compressor's all_reduce";
    EXPECT_EQ(worst_miss(plain.data(), count, exact,
                         [&](std::size_t i) { return c.n * 1.2e-7 * (std::fabs(exact(i)) + 10.0 * c.n); }),
              0.0)
        << "rank " << r << ": the program's own all_reduce";
    for (int j = 0; j < c.n; ++j)
      EXPECT_EQ(worst_miss(
                    gathered.data() + static_cast<std::size_t>(j) * count, count,
                    [&](std::size_t i) { return v(j, i); }, [&](std::size_t) { return bound.value; }),
                0.0)
          << "rank " << r << ": the Compressor's all_gather, block " << j;
    if (c.n > 1) {
      EXPECT_EQ(first.stats().raw_bytes, count * sizeof(float)) << "rank " << r << ": the first Compressor's total";
      EXPECT_EQ(second.stats().raw_bytes, count * sizeof(float)) << "rank " << r << ": the second Compressor's total";
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Backends, CompressedCalls,
                         ::testing::Values(Case{"shm", 1}, Case{"shm", 2}, Case{"shm", 3}, Case{"gloo", 1},
                                           Case{"gloo", 2}, Case{"gloo", 4}),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           return fmt::format("{}_{}ranks", p.param.backend, p.param.n);
                         });

}  // namespace
}  // namespace chorus::rt
