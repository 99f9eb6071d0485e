// Many producers against one progress queue: synchronous calls that claim the backend and run
// inline race with asynchronous posts, helpers that run queued tasks while waiting, and the
// progress thread. What must hold (progress_queue.h): at most one operation runs at a time,
// and the operations one thread issues run in the order it issued them. Run under
// ThreadSanitizer (scripts/test.sh --tsan), the unsynchronised counter below is also checked
// for data races: mutual exclusion must come with the happens-before edges that make it safe.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/rng.h"
#include "rt/progress_queue.h"

namespace rt = chorus::rt;

namespace {

struct Shared {
  std::uint64_t plain_counter = 0;  // touched only by the running operation: no atomics
  std::atomic<int> running{0};      // how many operations run right now
  std::atomic<int> max_running{0};
  std::vector<std::uint64_t> last_seen;  // per producer: sequence of its last operation run
};

void run_op(Shared& s, int producer, std::uint64_t seq, std::atomic<int>& order_errors) {
  const int now = s.running.fetch_add(1) + 1;
  int m = s.max_running.load();
  while (now > m && !s.max_running.compare_exchange_weak(m, now)) {
  }
  ++s.plain_counter;
  if (s.last_seen[static_cast<std::size_t>(producer)] + 1 != seq) order_errors.fetch_add(1);
  s.last_seen[static_cast<std::size_t>(producer)] = seq;
  s.running.fetch_sub(1);
}

}  // namespace

TEST(ProgressQueueStress, ManyProducersInlineAndQueuedKeepExclusionAndOrder) {
  constexpr int kProducers = 6;
  constexpr std::uint64_t kOpsEach = 4000;
  rt::ProgressQueue q("stress");
  Shared s;
  s.last_seen.assign(kProducers, 0);
  std::atomic<int> order_errors{0};
  std::atomic<std::uint64_t> inline_runs{0}, queued_runs{0};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      chorus::Rng rng(1000 + static_cast<std::uint64_t>(p));
      for (std::uint64_t seq = 1; seq <= kOpsEach; ++seq) {
        const std::uint64_t choice = rng.next() % 8;
        if (choice < 3 && q.try_claim()) {
          // A synchronous call on an idle backend: it runs here, after everything this
          // thread posted before (try_claim refuses while anything is queued).
          run_op(s, p, seq, order_errors);
          inline_runs.fetch_add(1, std::memory_order_relaxed);
          q.release();
          continue;
        }
        q.post([&, p, seq] {
          run_op(s, p, seq, order_errors);
          queued_runs.fetch_add(1, std::memory_order_relaxed);
        });
        if (choice == 7)
          q.drain();  // wait for everything so far
        else if (choice >= 5)
          q.run_front_inline();  // help while waiting
      }
    });
  }
  for (auto& t : threads) t.join();
  q.drain();
  const std::uint64_t total = kProducers * kOpsEach;
  EXPECT_EQ(s.plain_counter, total);
  EXPECT_EQ(inline_runs.load() + queued_runs.load(), total);
  EXPECT_EQ(s.max_running.load(), 1);
  EXPECT_EQ(order_errors.load(), 0);
  // Both paths were exercised, or the test proves nothing about their race.
  EXPECT_GT(inline_runs.load(), 0u);
  EXPECT_GT(queued_runs.load(), 0u);
  for (int p = 0; p < kProducers; ++p) EXPECT_EQ(s.last_seen[static_cast<std::size_t>(p)], kOpsEach);
}
