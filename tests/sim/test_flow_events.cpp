// FlowEvents (src/sim/flow/flow_events.h): whatever mix of pushes in order (the FIFO) and out of
// order (the heap), pops come out smallest first, as one sorted list of the same events.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

#include "sim/flow/flow_events.h"

namespace {

using chorus::sim::flow::FlowEvents;
using Event = FlowEvents::Event;

TEST(FlowEvents, HandWorkedOrder) {
  FlowEvents q;
  q.emplace(10.0, 1, 5);  // FIFO
  q.emplace(10.0, 1, 6);  // FIFO (larger flow)
  q.emplace(10.0, 0, 9);  // a completion at the same time: smaller, so the heap
  q.emplace(4.0, 1, 7);   // earlier: the heap
  q.emplace(12.0, 0, 1);  // FIFO
  std::vector<Event> got;
  while (!q.empty()) {
    got.push_back(q.top());
    q.pop();
  }
  const std::vector<Event> want = {{4.0, 1, 7}, {10.0, 0, 9}, {10.0, 1, 5}, {10.0, 1, 6}, {12.0, 0, 1}};
  EXPECT_EQ(got, want);
}

TEST(FlowEvents, LongInOrderRunsKeepTheirOrderAcrossTheFifosCompaction) {
  // 10,000 starts at one time in order, then pops and pushes interleaved: the FIFO drops its popped
  // front once half of it is popped (from 4,096 on) and must keep what is left in order.
  FlowEvents q;
  for (int f = 0; f < 10000; ++f) q.emplace(1.0, 1, f);
  int popped = 0;
  for (; popped < 6000; ++popped) {
    ASSERT_EQ(q.top(), Event(1.0, 1, popped));
    q.pop();
  }
  for (int f = 10000; f < 12000; ++f) q.emplace(2.0, 1, f);  // later: still in order
  q.emplace(1.5, 0, 99999);                                  // between: the heap
  for (; popped < 10000; ++popped) {
    ASSERT_EQ(q.top(), Event(1.0, 1, popped));
    q.pop();
  }
  ASSERT_EQ(q.top(), Event(1.5, 0, 99999));
  q.pop();
  for (int f = 10000; f < 12000; ++f) {
    ASSERT_EQ(q.top(), Event(2.0, 1, f));
    q.pop();
  }
  EXPECT_TRUE(q.empty());
}

TEST(FlowEvents, PopsInSortedOrderUnderRandomPushesAndPops) {
  std::mt19937 rng(7);
  FlowEvents q;
  std::vector<Event> pending;  // what is queued, by brute force
  int next_flow = 0;
  double clock = 0.0;
  for (int round = 0; round < 20000; ++round) {
    if (rng() % 3 != 0 || pending.empty()) {
      // Mostly in order (a barrier's release: one time, increasing flows), sometimes earlier.
      const double t = rng() % 4 == 0 ? clock + static_cast<double>(rng() % 50) : clock + 10.0;
      const Event e{t, static_cast<int>(rng() % 2), next_flow++};
      q.emplace(std::get<0>(e), std::get<1>(e), std::get<2>(e));
      pending.push_back(e);
    } else {
      const auto least = std::min_element(pending.begin(), pending.end());
      ASSERT_FALSE(q.empty());
      ASSERT_EQ(q.top(), *least);
      clock = std::get<0>(*least);
      pending.erase(least);
      q.pop();
    }
  }
  std::sort(pending.begin(), pending.end());
  for (const auto& e : pending) {
    ASSERT_EQ(q.top(), e);
    q.pop();
  }
  EXPECT_TRUE(q.empty());
}

}  // namespace
