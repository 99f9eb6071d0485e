// rt/rendezvous: the TCP store's server and client, its waits and its naming barrier.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "rt/errors.h"
#include "rt/rendezvous/store.h"
#include "rt/rendezvous/tcp_store.h"

using chorus::CollectiveKind;

namespace rt = chorus::rt;
using rt::DType;
using rt::ReduceOp;

TEST(Store, TcpServerGetWaitsAndBarrierReleasesAll) {
  rt::TcpStoreServer server("127.0.0.1");
  std::vector<std::thread> threads;
  std::atomic<int> through{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      rt::TcpStore store("127.0.0.1", server.port(), std::chrono::seconds(5), server.token());
      if (i == 3) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        store.set_string("answer", "42");
      }
      EXPECT_EQ(store.get_string("answer", std::chrono::seconds(5)), "42");
      store.barrier("b", 4, std::chrono::seconds(5));
      ++through;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(through.load(), 4);
  rt::TcpStore store("127.0.0.1", server.port(), std::chrono::seconds(5), server.token());
  EXPECT_THROW(store.get("never", std::chrono::milliseconds(100)), rt::TimeoutError);
}

// finalize()'s barrier: a waiting rank hears which ranks are missing; a timeout names them.
TEST(Store, NamingBarrierReportsAndNamesTheMissingRanks) {
  rt::TcpStoreServer server("127.0.0.1");
  const auto connect = [&] {
    return rt::TcpStore("127.0.0.1", server.port(), std::chrono::seconds(5), server.token());
  };
  // Ranks 0 and 2 of 3 arrive; rank 1 comes 400 ms later. Rank 0 reports every 100 ms.
  std::vector<std::vector<int>> reports;
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    auto s = connect();
    s.barrier_naming("b", 3, 1, std::chrono::seconds(5), std::chrono::milliseconds(0), nullptr);
  });
  std::thread other([&] {
    auto s = connect();
    s.barrier_naming("b", 3, 2, std::chrono::seconds(5), std::chrono::milliseconds(0), nullptr);
  });
  auto s0 = connect();
  s0.barrier_naming("b", 3, 0, std::chrono::seconds(5), std::chrono::milliseconds(100),
                    [&](const std::vector<int>& missing, std::chrono::milliseconds) { reports.push_back(missing); });
  late.join();
  other.join();
  ASSERT_GE(reports.size(), 2u);  // 400 ms of waiting, a report every 100 ms
  EXPECT_EQ(reports.back(), std::vector<int>{1});
  for (const auto& r : reports) EXPECT_TRUE(r == std::vector<int>{1} || r == (std::vector<int>{1, 2})) << r.size();
  // Only rank 0 of 4 comes: the timeout names the three others.
  try {
    s0.barrier_naming("c", 4, 0, std::chrono::milliseconds(300), std::chrono::milliseconds(0), nullptr);
    FAIL() << "no timeout";
  } catch (const rt::TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("rank(s) 1, 2, 3 did not arrive"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rt::rank_list({1, 2, 3, 4, 5}, 2), "1, 2 and 3 more");
  // Rank 2 of 3 only says it came (a broken runtime's finalize) and does not wait: ranks 0 and
  // 1 are released once both have arrived, and nobody is reported missing.
  s0.arrive("d", 2);
  EXPECT_EQ(s0.missing_ranks("d", 3), (std::vector<int>{0, 1}));
  std::thread one([&] {
    auto s = connect();
    s.barrier_naming("d", 3, 1, std::chrono::seconds(5), std::chrono::milliseconds(0), nullptr);
  });
  s0.barrier_naming("d", 3, 0, std::chrono::seconds(5), std::chrono::milliseconds(0), nullptr);
  one.join();
  EXPECT_TRUE(s0.missing_ranks("d", 3).empty());
}

// finalize() progresses its backends between the polls of its barrier: a peer that can reach
// the barrier only once this rank has moved what it owes (a message queued inside MPI) is
// released by the waiting rank's between_polls, not left to the timeout.
TEST(Store, NamingBarrierProgressesBetweenPolls) {
  rt::TcpStoreServer server("127.0.0.1");
  const auto connect = [&] {
    return rt::TcpStore("127.0.0.1", server.port(), std::chrono::seconds(5), server.token());
  };
  std::atomic<int> polls{0};
  std::thread peer([&] {
    auto s = connect();
    for (int i = 0; i < 5000 && polls.load() < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    s.barrier_naming("p", 2, 1, std::chrono::seconds(5), std::chrono::milliseconds(0), nullptr);
  });
  auto s0 = connect();
  EXPECT_NO_THROW(s0.barrier_naming("p", 2, 0, std::chrono::seconds(5), std::chrono::milliseconds(0), nullptr,
                                    [&] { polls.fetch_add(1); }));
  peer.join();
  EXPECT_GE(polls.load(), 3);
}
