// SYNDICATE's enforcer (rt/enforcer) with ranks as threads of one process
// (../backends/thread_ranks.h), each rank's Enforcer on its own Runtime, on shm and gloo at 1-4
// ranks. A plan written by hand: comm-op 0, an all-reduce of 12 elements, as two motifs on
// disjoint ranges and channels (they overlap); comm-op 1, an all-reduce of 8 after comm-op 0, as
// a reduce to rank 0 then its broadcast (a parent step), on a group of the world's ranks made on
// the runtime; comm-op 2, a reduce-scatter of 3 elements per rank, one motif. The application
// submits them in reverse order of the plan (the enforcer issues in the plan's); every element
// is checked against the sum over ranks of the formula that filled it (small integers, exact in
// f32), twice (a second run of the same Enforcer). Then a plan switch by two-phase commit on the
// runtime: committed when every rank votes yes, aborted when rank 0 votes no.
#include <gtest/gtest.h>

#include <cstddef>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdexcept>
#include <string>
#include <vector>

#include "rt/enforcer/enforcer.h"
#include "rt/enforcer/plan_switch.h"
#include "thread_ranks.h"

namespace chorus::rt {
namespace {

float value(int r, int op, std::size_t i) { return static_cast<float>((r + 1) * static_cast<int>(i % 4 + 1) + op); }

EnforcedStep step(int seq, CollectiveKind kind, const std::string& group, std::size_t offset, std::size_t count,
                  std::vector<int> channels, std::vector<int> after = {}) {
  EnforcedStep s;
  s.seq = seq;
  s.kind = kind;
  s.group = group;
  s.offset = offset;
  s.count = count;
  s.channels = std::move(channels);
  s.after = std::move(after);
  return s;
}

EnforcerPlan hand_plan(const std::string& backend, const std::string& group, int n) {
  EnforcerPlan plan;
  plan.ops.push_back({"grads-a",
                      CollectiveKind::kAllReduce,
                      {},
                      {step(0, CollectiveKind::kAllReduce, backend, 0, 5, {0}),
                       step(1, CollectiveKind::kAllReduce, backend, 5, 7, {1})}});
  plan.ops.push_back({"grads-b",
                      CollectiveKind::kAllReduce,
                      {0},
                      {step(2, CollectiveKind::kReduce, group, 0, 8, {0}),
                       step(3, CollectiveKind::kBroadcast, group, 0, 8, {0}, {0})}});
  EnforcedStep rs = step(4, CollectiveKind::kReduceScatter, backend, 0, 3, {1});
  rs.block = 3;
  rs.blocks = n;
  plan.ops.push_back({"shards", CollectiveKind::kReduceScatter, {}, {rs}});
  return plan;
}

struct Case {
  std::string backend;
  int n;
};

class EnforcerThreadRanks : public ::testing::TestWithParam<Case> {};

TEST_P(EnforcerThreadRanks, EveryElementOfEveryCommOpTwice) {
  const auto [backend, n] = GetParam();
  testing::spawn(n, {backend}, [&](Runtime& runtime, int r) {
    runtime.split("enforced", backend, 0, r);  // every rank, numbered as in the world
    Enforcer enforcer(runtime, hand_plan(backend, "enforced", n));
    const std::size_t N = static_cast<std::size_t>(n);
    for (int run = 0; run < 2; ++run) {
      std::vector<float> a(12), b(8), shards_in(3 * N), shards_out(3, -1.0f);
      for (std::size_t i = 0; i < a.size(); ++i) a[i] = value(r, 0, i);
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = value(r, 1, i);
      for (std::size_t i = 0; i < shards_in.size(); ++i) shards_in[i] = value(r, 2, i);
      enforcer.start();
      enforcer.submit(2, shards_in.data(), shards_out.data());
      enforcer.submit(1, b.data(), b.data());
      enforcer.submit(0, a.data(), a.data());
      for (int id : {0, 1, 2}) enforcer.wait(id);
      const EnforcerStats stats = enforcer.finish();
      auto sum = [&](int op, std::size_t i) {
        float s = 0;
        for (int q = 0; q < n; ++q) s += value(q, op, i);
        return s;
      };
      auto expect = [&](const std::vector<float>& got, int op, std::size_t from, const char* what) {
        for (std::size_t i = 0; i < got.size(); ++i)
          if (got[i] != sum(op, from + i))
            throw std::runtime_error(fmt::format("rank {}, run {}: {} element {} is {}, expected {}", r, run, what, i,
                                                 got[i], sum(op, from + i)));
      };
      expect(a, 0, 0, "grads-a");
      expect(b, 1, 0, "grads-b");
      expect(shards_out, 2, 3 * static_cast<std::size_t>(r), "shards");
      // Issued in the plan's order, whatever order the application submitted in.
      if (stats.issue_order != std::vector<int>{0, 1, 65536, 65537, 2 * 65536})
        throw std::runtime_error(fmt::format("rank {}: issue order {}", r, fmt::join(stats.issue_order, " ")));
    }
  });
}

TEST_P(EnforcerThreadRanks, TwoPhaseCommitOnTheRuntime) {
  const auto [backend, n] = GetParam();
  testing::spawn(n, {backend}, [&](Runtime& runtime, int r) {
    for (const bool veto : {false, true}) {
      std::string seen;
      bool installed = false;
      const auto outcome = two_phase_commit(
          runtime, backend, r == 0 ? "plan B" : "",
          [&](const std::string& text) {
            seen = text;
            return !(veto && r == 0);
          },
          [&] { installed = true; });
      if (seen != "plan B" || outcome.committed == veto || installed == veto || outcome.no_votes != (veto ? 1 : 0))
        throw std::runtime_error(fmt::format("rank {}, veto {}: saw '{}', committed {}, installed {}, {} no votes", r,
                                             veto, seen, outcome.committed, installed, outcome.no_votes));
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Backends, EnforcerThreadRanks,
                         ::testing::Values(Case{"shm", 1}, Case{"shm", 2}, Case{"shm", 3}, Case{"shm", 4},
                                           Case{"gloo", 1}, Case{"gloo", 2}, Case{"gloo", 3}, Case{"gloo", 4}),
                         [](const auto& p) { return fmt::format("{}_{}ranks", p.param.backend, p.param.n); });

}  // namespace
}  // namespace chorus::rt
