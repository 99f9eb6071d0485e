// finalize() must see operations running inline (a synchronous call that claimed an idle
// backend on another thread): the progress queue's busy flag covers them, and
// wait_until_idle() reports them until they release.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "rt/progress_queue.h"

using chorus::rt::ProgressQueue;
using Clock = std::chrono::steady_clock;

TEST(RtBusyLane, InlineClaimOnAnotherThreadIsSeenUntilReleased) {
  ProgressQueue q("test");
  EXPECT_FALSE(q.busy());
  EXPECT_TRUE(q.wait_until_idle(Clock::now()));
  std::atomic<bool> claimed{false}, let_go{false};
  std::thread inline_caller([&] {
    ASSERT_TRUE(q.try_claim());
    claimed = true;
    while (!let_go) std::this_thread::yield();
    q.release();
  });
  while (!claimed) std::this_thread::yield();
  // Claimed and not released: busy, and a bounded wait gives up (returns false).
  EXPECT_TRUE(q.busy());
  EXPECT_FALSE(q.wait_until_idle(Clock::now() + std::chrono::milliseconds(20)));
  // A second inline caller cannot claim the lane meanwhile.
  EXPECT_FALSE(q.try_claim());
  let_go = true;
  EXPECT_TRUE(q.wait_until_idle(Clock::now() + std::chrono::seconds(30)));
  inline_caller.join();
  EXPECT_FALSE(q.busy());
}

TEST(RtBusyLane, QueuedTaskIsSeenWhileItRuns) {
  ProgressQueue q("test");
  std::atomic<bool> running{false}, let_go{false};
  q.post([&] {
    running = true;
    while (!let_go) std::this_thread::yield();
  });
  while (!running) std::this_thread::yield();
  EXPECT_TRUE(q.busy());
  EXPECT_FALSE(q.wait_until_idle(Clock::now() + std::chrono::milliseconds(20)));
  let_go = true;
  q.drain();
  EXPECT_TRUE(q.wait_until_idle(Clock::now() + std::chrono::seconds(30)));
}
