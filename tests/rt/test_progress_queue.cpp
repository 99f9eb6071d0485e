// rt/progress_queue.h: one lane's ordered queue and its inline claim.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "rt/progress_queue.h"

using chorus::CollectiveKind;

namespace rt = chorus::rt;
using rt::DType;
using rt::ReduceOp;

TEST(ProgressQueue, RunsInOrderAndClaimFailsWhenBusy) {
  rt::ProgressQueue q("test");
  std::vector<int> order;
  std::atomic<bool> release{false};
  q.post([&] {
    while (!release.load()) std::this_thread::yield();
    order.push_back(0);
  });
  for (int i = 1; i < 5; ++i) q.post([&order, i] { order.push_back(i); });
  EXPECT_FALSE(q.try_claim());
  release = true;
  q.drain();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(q.try_claim());
  q.release();
}
