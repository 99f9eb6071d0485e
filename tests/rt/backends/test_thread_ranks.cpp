// Every operation on every backend that runs in threads (shm, gloo), ranks as threads of this
// process (thread_ranks.h), parametrized over backend x world size, and inside each world over
// dtypes x counts x reduce ops x in place x the backend's named algorithms. Expected values
// come from a brute-force reference computed here in double, from the same formulas that fill
// the inputs: small integers, exact in every dtype (f16 and bf16 hold integers up to 256).
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <fmt/format.h>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "rt/dtype.h"
#include "rt/errors.h"
#include "thread_ranks.h"

namespace chorus::rt {
namespace {

using Value = std::function<double(std::size_t)>;

struct Buf {
  DType dtype;
  std::vector<std::byte> bytes;
  Buf(
      DType d, std::size_t n, const Value& v = [](std::size_t) { return 0.0; })
      : dtype(d), bytes(n * dtype_bytes(d)) {
    for (std::size_t i = 0; i < n; ++i) store_from_double(d, bytes.data(), i, v(i));
  }
  void* data() { return bytes.empty() ? nullptr : bytes.data(); }
};

// Compares the first `n` elements of `b` with `want`; reports the first difference only.
void expect_values(const Buf& b, std::size_t n, const Value& want, const std::string& what) {
  for (std::size_t i = 0; i < n; ++i) {
    const double got = load_as_double(b.dtype, b.bytes.data(), i);
    if (got != want(i)) {
      ADD_FAILURE() << what << ": element " << i << " is " << got << ", expected " << want(i);
      return;
    }
  }
}

// Rank r's element i for reductions: k_i + d_r with sum_r d_r = 0, so the sum is n k_i, the avg
// k_i exactly, the max k_i + n - 1, the min k_i - (n - 1); all within 1..92 for n <= 4.
double k(std::size_t i) { return 8.0 + static_cast<double>(i * 5 % 13); }
double x(int r, int n, std::size_t i) { return k(i) + 2.0 * r - (n - 1); }
// A value that names its origin: rank `src`'s element i (for `dst`), between 1 and 50.
double y(int src, std::size_t i, int dst = 0) { return static_cast<double>((src * 17 + dst * 3 + i) % 50 + 1); }

double reduced(ReduceOp op, int n, std::size_t i) {
  switch (op) {
    case ReduceOp::sum:
      return n * k(i);
    case ReduceOp::avg:
      return k(i);
    case ReduceOp::max:
      return x(n - 1, n, i);
    case ReduceOp::min:
      return x(0, n, i);
    default:
      return 0;
  }
}

// The block of a buffer laid out by `displs` (ascending) that element i lies in.
int block_of(const Counts& displs, std::size_t i) {
  int j = 0;
  while (static_cast<std::size_t>(j + 1) < displs.size() && displs[static_cast<std::size_t>(j + 1)] <= i) ++j;
  return j;
}

struct Case {
  std::string backend;
  int n;
};

class ThreadRanks : public ::testing::TestWithParam<Case> {};

// The collectives that take an algorithm, on `name` ("shm", or "gloo:ring" for a named
// algorithm of the operation `only`).
void uniform_collectives(Runtime& rt, const std::string& name, int r, int n, DType dt, std::size_t count,
                         const std::string& at, std::optional<CollectiveKind> only = std::nullopt) {
  const auto nc = static_cast<std::size_t>(n) * count;
  const auto runs = [&](CollectiveKind op) { return !only || *only == op; };
  if (runs(CollectiveKind::kAllReduce))
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min, ReduceOp::avg})
      for (bool in_place : {false, true}) {
        Buf in(dt, count, [&](std::size_t i) { return x(r, n, i); }), out(dt, count);
        rt.issue(name, calls::all_reduce(in.data(), in_place ? in.data() : out.data(), count, dt, op), false);
        expect_values(
            in_place ? in : out, count, [&](std::size_t i) { return reduced(op, n, i); },
            fmt::format("{} all_reduce {}{}", at, to_string(op), in_place ? " in place" : ""));
      }
  if (runs(CollectiveKind::kReduceScatter)) {
    Buf in(dt, nc, [&](std::size_t i) { return x(r, n, i); }), out(dt, count);
    rt.issue(name, calls::reduce_scatter(in.data(), out.data(), count, dt, ReduceOp::sum), false);
    expect_values(
        out, count, [&](std::size_t i) { return n * k(static_cast<std::size_t>(r) * count + i); },
        at + " reduce_scatter");
  }
  if (runs(CollectiveKind::kAllGather)) {
    Buf in(dt, count, [&](std::size_t i) { return y(r, i); }), out(dt, nc);
    rt.issue(name, calls::all_gather(in.data(), out.data(), count, dt), false);
    expect_values(
        out, nc, [&](std::size_t i) { return y(static_cast<int>(i / count), i % count); }, at + " all_gather");
  }
  if (runs(CollectiveKind::kBroadcast)) {
    const int root = n - 1;
    Buf buf(dt, count, [&](std::size_t i) { return r == root ? y(root, i) : 0.0; });
    rt.issue(name, calls::broadcast(buf.data(), count, dt, root), false);
    expect_values(
        buf, count, [&](std::size_t i) { return y(root, i); }, at + " broadcast");
  }
  if (runs(CollectiveKind::kAllToAllSingle)) {
    // Block j of rank r's input goes to rank j: element i of it is y(r, i, j).
    Buf in(dt, nc, [&](std::size_t i) { return y(r, i % count, static_cast<int>(i / count)); }), out(dt, nc);
    rt.issue(name, calls::all_to_all_single(in.data(), out.data(), count, dt), false);
    expect_values(
        out, nc, [&](std::size_t i) { return y(static_cast<int>(i / count), i % count, r); },
        at + " all_to_all_single");
  }
}

// The rooted collectives, barrier, the vector forms and point-to-point on the backend itself.
void other_operations(Runtime& rt, const std::string& b, int r, int n, DType dt, std::size_t count,
                      const std::string& at) {
  const auto nc = static_cast<std::size_t>(n) * count;
  for (bool in_place : {false, true}) {
    const int root = n / 2;
    Buf in(dt, count, [&](std::size_t i) { return x(r, n, i); }), out(dt, count);
    void* dst = in_place ? in.data() : out.data();
    rt.issue(b, calls::reduce(in.data(), r == root ? dst : nullptr, count, dt, ReduceOp::sum, root), false);
    if (r == root)
      expect_values(
          in_place ? in : out, count, [&](std::size_t i) { return n * k(i); },
          at + (in_place ? " reduce in place" : " reduce"));
  }
  {
    Buf in(dt, count, [&](std::size_t i) { return y(r, i); }), out(dt, r == 0 ? nc : 0);
    rt.issue(b, calls::gather(in.data(), r == 0 ? out.data() : nullptr, count, dt, 0), false);
    if (r == 0)
      expect_values(
          out, nc, [&](std::size_t i) { return y(static_cast<int>(i / count), i % count); }, at + " gather");
  }
  {
    const int root = n - 1;
    Buf in(dt, r == root ? nc : 0, [&](std::size_t i) { return y(root, i % count, static_cast<int>(i / count)); });
    Buf out(dt, count);
    rt.issue(b, calls::scatter(r == root ? in.data() : nullptr, out.data(), count, dt, root), false);
    expect_values(
        out, count, [&](std::size_t i) { return y(root, i, r); }, at + " scatter");
  }
  rt.issue(b, calls::barrier(), false);

  // Vector forms: rank j contributes count + j elements; between ranks s and d, count + (s+d)%3.
  Counts counts(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
  std::size_t total = 0;
  for (int j = 0; j < n; ++j) {
    counts[static_cast<std::size_t>(j)] = count + static_cast<std::size_t>(j);
    displs[static_cast<std::size_t>(j)] = total;
    total += count + static_cast<std::size_t>(j);
  }
  const std::size_t mine = count + static_cast<std::size_t>(r);
  const auto owner = [&](std::size_t i) { return block_of(displs, i); };
  const auto gathered = [&](std::size_t i) {
    const int j = owner(i);
    return y(j, i - displs[static_cast<std::size_t>(j)]);
  };
  {
    Buf in(dt, mine, [&](std::size_t i) { return y(r, i); }), out(dt, total);
    rt.issue(b, calls::all_gatherv(in.data(), mine, out.data(), counts, displs, dt), false);
    expect_values(out, total, gathered, at + " all_gatherv");
  }
  {
    Buf in(dt, mine, [&](std::size_t i) { return y(r, i); }), out(dt, total);
    rt.issue(b, calls::gatherv(in.data(), mine, out.data(), counts, displs, dt, 0), false);
    if (r == 0) expect_values(out, total, gathered, at + " gatherv");
  }
  {
    Buf in(dt, total, [&](std::size_t i) { return y(0, i - displs[static_cast<std::size_t>(owner(i))], owner(i)); });
    Buf out(dt, mine);
    rt.issue(b, calls::scatterv(in.data(), counts, displs, out.data(), mine, dt, 0), false);
    expect_values(
        out, mine, [&](std::size_t i) { return y(0, i, r); }, at + " scatterv");
  }
  {
    const auto pair = [&](int s, int d) { return count + static_cast<std::size_t>((s + d) % 3); };
    Counts sc(static_cast<std::size_t>(n)), sd(sc), rc(sc), rd(sc);
    std::size_t st = 0, rt_total = 0;
    for (int j = 0; j < n; ++j) {
      const auto u = static_cast<std::size_t>(j);
      sc[u] = pair(r, j), sd[u] = st, st += sc[u];
      rc[u] = pair(j, r), rd[u] = rt_total, rt_total += rc[u];
    }
    Buf in(dt, st, [&](std::size_t i) {
      const int j = block_of(sd, i);
      return y(r, i - sd[static_cast<std::size_t>(j)], j);
    });
    Buf out(dt, rt_total);
    rt.issue(b, calls::all_to_allv(in.data(), sc, sd, out.data(), rc, rd, dt), false);
    expect_values(
        out, rt_total,
        [&](std::size_t i) {
          const int j = block_of(rd, i);
          return y(j, i - rd[static_cast<std::size_t>(j)], r);
        },
        at + " all_to_allv");
    // The list form: one buffer per peer.
    std::vector<Buf> ins, outs;
    std::vector<const void*> in_ptrs;
    std::vector<void*> out_ptrs;
    for (int j = 0; j < n; ++j) {
      ins.emplace_back(dt, sc[static_cast<std::size_t>(j)], [&](std::size_t i) { return y(r, i, j); });
      outs.emplace_back(dt, rc[static_cast<std::size_t>(j)]);
    }
    for (int j = 0; j < n; ++j) in_ptrs.push_back(ins[static_cast<std::size_t>(j)].data());
    for (int j = 0; j < n; ++j) out_ptrs.push_back(outs[static_cast<std::size_t>(j)].data());
    rt.issue(b, calls::all_to_all(in_ptrs, sc, out_ptrs, rc, dt), false);
    for (int j = 0; j < n; ++j)
      expect_values(
          outs[static_cast<std::size_t>(j)], rc[static_cast<std::size_t>(j)], [&](std::size_t i) { return y(j, i, r); },
          fmt::format("{} all_to_all from rank {}", at, j));
  }
  if (n > 1) {
    // A ring of point-to-point messages, both sides asynchronous.
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    Buf out(dt, count, [&](std::size_t i) { return y(r, i, next); }), in(dt, count);
    Work s = rt.issue(b, calls::send(out.data(), count, dt, next), true);
    Work v = rt.issue(b, calls::recv(in.data(), count, dt, prev), true);
    s.wait();
    v.wait();
    expect_values(
        in, count, [&](std::size_t i) { return y(prev, i, r); }, at + " send/recv");
  }
}

TEST_P(ThreadRanks, EveryOperationMatchesTheReference) {
  const Case c = GetParam();
  testing::spawn(c.n, {c.backend}, [&](Runtime& rt, int r) {
    ASSERT_EQ(rt.rank(c.backend), r);
    ASSERT_EQ(rt.size(c.backend), c.n);
    for (DType dt : kAllDTypes)
      for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
        const std::string at = fmt::format("rank {} of {} on {}, {} x {}", r, c.n, c.backend, count, to_string(dt));
        uniform_collectives(rt, c.backend, r, c.n, dt, count, at);
        other_operations(rt, c.backend, r, c.n, dt, count, at);
      }
    // Large enough for each backend's path for big messages (shm: past its small-message lines).
    uniform_collectives(rt, c.backend, r, c.n, DType::f32, 70000,
                        fmt::format("rank {} on {}, 70000 x f32", r, c.backend));
    // Every named algorithm of every operation that takes one.
    for (CollectiveKind op : kAllCollectiveKinds)
      for (const std::string& a : rt.algorithm_names(c.backend, op))
        for (std::size_t count : {std::size_t{1}, std::size_t{1000}})
          uniform_collectives(rt, c.backend + ":" + a, r, c.n, DType::f32, count,
                              fmt::format("rank {} on {}:{}, {} x f32", r, c.backend, a, count), op);
  });
}

// Small vector forms ride inside the agreement exchange when every rank's data fits its row
// (rt/agreement.cpp). Here rank 0 sends each peer 40,000 f32 (160 KB, more than any row takes)
// and the others send 3: the ranks must all take the library's path, and then all ride again
// on the next call, where every rank sends 3.
TEST_P(ThreadRanks, UnevenExchangesWhereOnlySomeRanksFitTheRowArriveWhole) {
  const Case c = GetParam();
  testing::spawn(c.n, {c.backend}, [&](Runtime& rt, int r) {
    const auto n = static_cast<std::size_t>(c.n);
    for (std::size_t big : {std::size_t{40000}, std::size_t{3}}) {
      const auto pair = [&](int s) { return s == 0 ? big : std::size_t{3}; };  // what rank s sends each rank
      Counts sc(n), sd(n), rc(n), rd(n);
      std::size_t st = 0, rt_total = 0;
      for (std::size_t j = 0; j < n; ++j) {
        sc[j] = pair(r), sd[j] = st, st += sc[j];
        rc[j] = pair(static_cast<int>(j)), rd[j] = rt_total, rt_total += rc[j];
      }
      Buf in(DType::f32, st, [&](std::size_t i) {
        const int j = block_of(sd, i);
        return y(r, i - sd[static_cast<std::size_t>(j)], j);
      });
      Buf out(DType::f32, rt_total);
      rt.issue(c.backend, calls::all_to_allv(in.data(), sc, sd, out.data(), rc, rd, DType::f32), false);
      expect_values(
          out, rt_total,
          [&](std::size_t i) {
            const int j = block_of(rd, i);
            return y(j, i - rd[static_cast<std::size_t>(j)], r);
          },
          fmt::format("rank {} of {} on {}, rank 0 sending {}: all_to_allv", r, c.n, c.backend, big));
      // all_gatherv: rank 0's block `big`, the others' 3.
      Buf mine(DType::f32, pair(r), [&](std::size_t i) { return y(r, i); }), all(DType::f32, rt_total);
      rt.issue(c.backend, calls::all_gatherv(mine.data(), pair(r), all.data(), rc, rd, DType::f32), false);
      expect_values(
          all, rt_total,
          [&](std::size_t i) {
            const int j = block_of(rd, i);
            return y(j, i - rd[static_cast<std::size_t>(j)]);
          },
          fmt::format("rank {} of {} on {}, rank 0 sending {}: all_gatherv", r, c.n, c.backend, big));
    }
  });
}

// A null buffer where a call reads or writes elements is refused before anything moves, naming
// the buffer; where the call does not touch it (a gather's output off the root), null is fine.
TEST(ThreadRanksValidation, NullBuffersAreRefusedWhereTheCallUsesThem) {
  testing::spawn(2, {"shm"}, [&](Runtime& rt, int r) {
    const auto error_of = [&](Call call) {
      try {
        rt.issue("shm", std::move(call), false);
      } catch (const InputError& e) {
        return std::string(e.what());
      }
      return std::string("(no InputError)");
    };
    std::vector<float> x(8, 1.0f);
    const std::string at = fmt::format("on shm, rank {}", r);
    EXPECT_NE(error_of(calls::all_reduce(nullptr, x.data(), 4, DType::f32, ReduceOp::sum))
                  .find("all_reduce " + at + ": input is null but count is 4"),
              std::string::npos);
    EXPECT_NE(error_of(calls::all_reduce(x.data(), nullptr, 4, DType::f32, ReduceOp::sum))
                  .find("output is null but count is 4"),
              std::string::npos);
    EXPECT_NE(error_of(calls::broadcast(nullptr, 3, DType::f32, 0))
                  .find("broadcast " + at + ": buffer is null but count is 3"),
              std::string::npos);
    // A gather writes its output at the root only: null elsewhere is fine, null at the root is not.
    std::vector<float> all(8, -1.0f);
    if (r == 1) {
      rt.issue("shm", calls::gather(x.data(), nullptr, 4, DType::f32, 0), false);
    } else {
      EXPECT_NE(
          error_of(calls::gather(x.data(), nullptr, 4, DType::f32, 0)).find("output at root is null but count is 4"),
          std::string::npos);
      // The refused call moved nothing: rank 1's gather is still waiting, and this one meets it.
      rt.issue("shm", calls::gather(x.data(), all.data(), 4, DType::f32, 0), false);
      EXPECT_EQ(all, std::vector<float>(8, 1.0f));
    }
    // No elements, no buffer needed.
    rt.issue("shm", calls::all_reduce(nullptr, nullptr, 0, DType::f32, ReduceOp::sum), false);
  });
}

// Rank 0 all-reduces 4 elements, the others 8: every rank fails with a DisagreementError naming
// its own call and a peer's, before any data moves, and the runtimes still end cleanly (their
// destructors agree with the peers that all are done).
TEST_P(ThreadRanks, RanksThatDisagreeFailTogetherNamingBothCalls) {
  const Case c = GetParam();
  if (c.n < 2) GTEST_SKIP() << "one rank cannot disagree";
  testing::spawn(c.n, {c.backend}, [&](Runtime& rt, int r) {
    std::vector<float> in(8, 1.0f), out(8, -1.0f);
    const std::size_t count = r == 0 ? 4 : 8;
    std::string error;
    try {
      rt.issue(c.backend, calls::all_reduce(in.data(), out.data(), count, DType::f32, ReduceOp::sum), false);
    } catch (const DisagreementError& e) {
      error = e.what();
    }
    EXPECT_NE(
        error.find(fmt::format("{} all_reduce on rank {}: ranks disagree: rank {} called all_reduce of {} f32 (sum)",
                               c.backend, r, r, count)),
        std::string::npos)
        << error;
    EXPECT_NE(error.find(fmt::format("all_reduce of {} f32 (sum)", r == 0 ? 8 : 4)), std::string::npos) << error;
    EXPECT_EQ(out, std::vector<float>(8, -1.0f)) << "rank " << r << ": no data moved";
  });
}

// Rank 0 all-reduces 16 floats with the runtime's ring on point-to-point, the others with the
// backend's own algorithm (on gloo the call then rides inside the agreement exchange, where the
// ring would send messages no peer expects): every rank fails naming both algorithms, and no data
// moves.
TEST_P(ThreadRanks, RanksThatDisagreeOnTheAlgorithmFailTogetherNamingBoth) {
  const Case c = GetParam();
  if (c.n < 2) GTEST_SKIP() << "one rank cannot disagree";
  testing::spawn(c.n, {c.backend}, [&](Runtime& rt, int r) {
    std::vector<float> in(16, 1.0f), out(16, -1.0f);
    std::string error;
    try {
      rt.issue(r == 0 ? c.backend + ":ring_p2p" : c.backend,
               calls::all_reduce(in.data(), out.data(), 16, DType::f32, ReduceOp::sum), false);
    } catch (const DisagreementError& e) {
      error = e.what();
    }
    const std::string ring = fmt::format("algorithm {}:ring_p2p", c.backend), own = "the default algorithm";
    EXPECT_NE(error.find(fmt::format("{} all_reduce on rank {}: ranks disagree: rank {} called all_reduce of 16 f32 "
                                     "(sum) with {}, rank {} with {}",
                                     c.backend, r, r, r == 0 ? ring : own, r == 0 ? 1 : 0, r == 0 ? own : ring)),
              std::string::npos)
        << error;
    EXPECT_EQ(out, std::vector<float>(16, -1.0f)) << "rank " << r << ": no data moved";
  });
}

// The waiting line of a job's very first collective (seq 0) names it and its own wait: rank 1
// comes 2.5 s late to an all-reduce; rank 0 says once, after the second the 10 s timeout gives,
// that it waits in all_reduce seq 0 (a wait that began at the clock's origin, "(not recorded: no
// seq)" and an uptime's seconds, was said before the fix).
TEST(GlooWaitingLine, TheFirstCollectiveIsNamedWithItsOwnWait) {
  ::testing::internal::CaptureStderr();
  double waited_s = 0;  // rank 0's call, start to end: the longest wait it can have said
  testing::spawn(
      2, {"gloo"},
      [&](Runtime& rt, int r) {
        std::vector<float> in(16, 1.0f), out(16, -1.0f);
        if (r == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2500));
        const auto t0 = std::chrono::steady_clock::now();
        rt.issue("gloo", calls::all_reduce(in.data(), out.data(), 16, DType::f32, ReduceOp::sum), false);
        if (r == 0) waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        EXPECT_EQ(out, std::vector<float>(16, 2.0f)) << "rank " << r;
      },
      10);
  const std::string said = ::testing::internal::GetCapturedStderr();
  const std::string want = "chorus rt: gloo all_reduce seq 0: rank 0 waiting (";
  const auto at = said.find(want);
  ASSERT_NE(at, std::string::npos) << said;
  EXPECT_EQ(said.find(want, at + 1), std::string::npos) << "said once: " << said;
  const double so_far = std::stod(said.substr(at + want.size()));
  EXPECT_GE(so_far, 1.0) << said;             // said after a second of waiting (to the second)
  EXPECT_LE(so_far, waited_s + 0.5) << said;  // and while it waited
}

INSTANTIATE_TEST_SUITE_P(Backends, ThreadRanks,
                         ::testing::Values(Case{"shm", 1}, Case{"shm", 2}, Case{"shm", 3}, Case{"shm", 4},
                                           Case{"gloo", 1}, Case{"gloo", 2}, Case{"gloo", 3}, Case{"gloo", 4}),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           return fmt::format("{}_{}ranks", p.param.backend, p.param.n);
                         });

}  // namespace
}  // namespace chorus::rt
