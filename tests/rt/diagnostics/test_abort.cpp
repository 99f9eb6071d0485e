// rt::abort (Runtime::abort) with ranks as threads: an operation in flight on shm ends within
// milliseconds, calls after it fail at once naming the reason, and the flight record says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "rt/errors.h"
#include "tests/rt/backends/thread_ranks.h"

namespace chorus::rt {
namespace {

using Clock = std::chrono::steady_clock;

// Rank 0 waits in an all-reduce that rank 1 never joins; another thread of rank 0 aborts 200 ms
// later. The all-reduce ends with the abort's error long before the 60 s operation timeout.
TEST(Abort, EndsAnShmOperationInFlightAndEveryCallAfterIt) {
  std::promise<void> done;
  auto rank0_done = done.get_future().share();
  testing::spawn(
      2, {"shm"},
      [&](Runtime& rt, int r) {
        if (r == 1) {
          rank0_done.wait();  // never joins the all-reduce
          return;
        }
        std::vector<float> x(256, 1.0f);
        std::thread aborter([&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          rt.abort("the test gave up");
        });
        const auto start = Clock::now();
        std::string error;
        try {
          rt.issue("shm", calls::all_reduce(x.data(), x.data(), x.size(), DType::f32, ReduceOp::sum), false);
        } catch (const CommError& e) {
          error = e.what();
        }
        aborter.join();
        const double waited = std::chrono::duration<double>(Clock::now() - start).count();
        EXPECT_NE(error.find("aborted"), std::string::npos) << error;
        EXPECT_LT(waited, 20.0) << "the abort did not end the wait; it ended after " << waited << " s";
        // A call after the abort fails at once, naming why.
        try {
          rt.issue("shm", calls::barrier(), false);
          ADD_FAILURE() << "a call after abort() ran";
        } catch (const CommError& e) {
          EXPECT_NE(std::string(e.what()).find("aborted on rank 0: the test gave up"), std::string::npos) << e.what();
        }
        done.set_value();
      },
      /*timeout_s=*/60);
}

// On shm and gloo, rank 0 waits in an all-reduce that rank 1 has not joined, and aborts 200 ms
// later. On gloo: small (Gloo's classic halving-doubling, on the small connections) and 2 MiB
// (Gloo's own all-reduce, on the main ones); without the agreement round, so that the wait is in
// Gloo's algorithm itself, and with it, where the wait is in the agreement's exchange. The wait
// ends with the abort's reason long before the 60 s timeout; then rank 1's next call fails at
// once (gloo: rank 0's connections are closed; shm: rank 0's mark in the segment), naming rank
// 0's abort.
TEST(Abort, EndsAnOperationInFlightAndThePeerNamesIt) {
  for (const std::string backend : {"shm", "gloo"})
    for (const int agree : {0, 1})
      for (const std::size_t count : {std::size_t{256}, std::size_t{1} << 19}) {
        SCOPED_TRACE(fmt::format("{}: {} floats, agreement {}", backend, count, agree));
        std::promise<void> done;
        auto rank0_done = done.get_future().share();
        InitOptions options;
        options.agree = agree;
        testing::spawn(
            2, {backend},
            [&](Runtime& rt, int r) {
              std::vector<float> x(count, 1.0f);
              const auto start = Clock::now();
              std::string error;
              if (r == 1) {
                rank0_done.wait();  // joins only after rank 0 aborted
                // Rank 0's part of its last call may have arrived before its connections closed,
                // so that call may complete here, with both ranks' data; the next one cannot.
                for (int call = 0; call < 2 && error.empty(); ++call) {
                  std::fill(x.begin(), x.end(), 1.0f);
                  try {
                    rt.issue(backend, calls::all_reduce(x.data(), x.data(), x.size(), DType::f32, ReduceOp::sum),
                             false);
                    EXPECT_EQ(call, 0) << "a call after the first completed without rank 0";
                    EXPECT_EQ(x, std::vector<float>(count, 2.0f)) << "a completed call holds both ranks' data";
                  } catch (const CommError& e) {
                    error = e.what();
                  }
                }
                EXPECT_NE(error.find("rank 0 failed first: aborted on rank 0: the test gave up"), std::string::npos)
                    << error;
                EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 20.0);
                return;
              }
              std::thread aborter([&] {
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
                rt.abort("the test gave up");
              });
              try {
                rt.issue(backend, calls::all_reduce(x.data(), x.data(), x.size(), DType::f32, ReduceOp::sum), false);
              } catch (const CommError& e) {
                error = e.what();
              }
              aborter.join();
              const double waited = std::chrono::duration<double>(Clock::now() - start).count();
              EXPECT_TRUE(error.starts_with(backend + " all_reduce") &&
                          error.find("aborted on rank 0: the test gave up") != std::string::npos)
                  << error;
              EXPECT_LT(waited, 20.0) << "the abort did not end the wait; it ended after " << waited << " s";
              done.set_value();
            },
            /*timeout_s=*/60, options);
      }
}

// On gloo nothing is in flight: every call after the abort fails at once, asynchronous ones too.
TEST(Abort, MakesEveryGlooCallFailNamingTheReason) {
  testing::spawn(2, {"gloo"}, [&](Runtime& rt, int r) {
    std::vector<float> x(4, 1.0f);
    rt.issue("gloo", calls::all_reduce(x.data(), x.data(), 4, DType::f32, ReduceOp::sum), false);
    rt.abort(r == 0 ? "first" : "second");
    for (bool async_op : {false, true}) {
      try {
        rt.issue("gloo", calls::all_reduce(x.data(), x.data(), 4, DType::f32, ReduceOp::sum), async_op).wait();
        ADD_FAILURE() << "a call after abort() ran";
      } catch (const CommError& e) {
        EXPECT_NE(std::string(e.what()).find(fmt::format("aborted on rank {}: {}", r, r == 0 ? "first" : "second")),
                  std::string::npos)
            << e.what();
      }
    }
    EXPECT_EQ(x, std::vector<float>(4, 2.0f)) << "only the call before the abort ran";
  });
}

}  // namespace
}  // namespace chorus::rt
