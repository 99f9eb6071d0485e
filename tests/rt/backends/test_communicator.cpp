// rt::Communicator: a backend or group resolved once, with its named algorithm, on ranks as
// threads (thread_ranks.h). Expected values by hand: every rank contributes rank + 1 to an
// all-reduce of n ranks, so each element sums to n (n + 1) / 2.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "thread_ranks.h"

namespace chorus::rt {
namespace {

std::vector<float> all_reduced(const Communicator& c, int r, std::size_t count) {
  std::vector<float> x(count, static_cast<float>(r + 1));
  c.issue(calls::all_reduce(x.data(), x.data(), count, DType::f32, ReduceOp::sum));
  return x;
}

// What a test expects an InputError's message to hold.
template <typename F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

TEST(Communicator, IssuesAsItsNameDoesOnEveryBackend) {
  for (const std::string backend : {"shm", "gloo"})
    testing::spawn(3, {backend}, [&](Runtime& rt, int r) {
      const Communicator c = rt.communicator(backend);
      EXPECT_EQ(c.name(), backend);
      EXPECT_EQ(c.rank(), r);
      EXPECT_EQ(c.size(), 3);
      EXPECT_EQ(c.resolve(CollectiveKind::kAllReduce), backend);
      for (std::size_t count : {std::size_t{1}, std::size_t{5000}})
        EXPECT_EQ(all_reduced(c, r, count), std::vector<float>(count, 6.0f)) << backend << ", " << count;
      // Asynchronously, and a copy of the handle is the same communicator.
      const Communicator copy = c;
      std::vector<float> x(64, static_cast<float>(r + 1));
      Work w = copy.issue(calls::all_reduce(x.data(), x.data(), x.size(), DType::f32, ReduceOp::sum), true);
      w.wait();
      EXPECT_EQ(x, std::vector<float>(64, 6.0f));
      copy.issue(calls::barrier());
    });
}

TEST(Communicator, ANamedAlgorithmRunsWhereItExistsAndIsRefusedWhereNot) {
  testing::spawn(2, {"gloo"}, [&](Runtime& rt, int r) {
    const Communicator ring = rt.communicator("gloo:ring");
    EXPECT_EQ(ring.resolve(CollectiveKind::kAllReduce), "gloo:ring");
    EXPECT_EQ(all_reduced(ring, r, 1000), std::vector<float>(1000, 3.0f));
    // An operation that takes no algorithm runs as on the plain backend.
    EXPECT_EQ(ring.resolve(CollectiveKind::kBarrier), "gloo");
    ring.issue(calls::barrier());
    // Gloo's ring is an all-reduce algorithm: a broadcast through this communicator is refused,
    // before any rank moves data, naming the algorithms it has.
    std::vector<float> b(4, 1.0f);
    const std::string error = input_error_of([&] { ring.issue(calls::broadcast(b.data(), 4, DType::f32, 0)); });
    EXPECT_NE(error.find("communicator 'gloo:ring': gloo has no broadcast algorithm 'ring' (it has: default, "
                         "linear_p2p)"),
              std::string::npos)
        << error;
    // The runtime's generic ring has forms for three operations.
    const Communicator p2p = rt.communicator("gloo:ring_p2p");
    EXPECT_EQ(p2p.resolve(CollectiveKind::kAllGather), "gloo:ring_p2p");
    std::vector<float> mine(3, static_cast<float>(r)), all(6, -1.0f);
    p2p.issue(calls::all_gather(mine.data(), all.data(), 3, DType::f32));
    EXPECT_EQ(all, (std::vector<float>{0, 0, 0, 1, 1, 1}));
  });
}

TEST(Communicator, GroupsAreCommunicatorsToo) {
  testing::spawn(4, {"shm"}, [&](Runtime& rt, int r) {
    rt.split("halves", "shm", r / 2, r);
    const Communicator half = rt.communicator("halves");
    EXPECT_EQ(half.size(), 2);
    EXPECT_EQ(half.rank(), r % 2);
    // Ranks 0, 1 add 1 + 2; ranks 2, 3 add 3 + 4.
    EXPECT_EQ(all_reduced(half, r, 10), std::vector<float>(10, r < 2 ? 3.0f : 7.0f));
  });
}

TEST(Communicator, BadNamesAreRefusedWhenTheCommunicatorIsMade) {
  testing::spawn(1, {"shm"}, [&](Runtime& rt, int) {
    EXPECT_NE(input_error_of([&] { rt.communicator("auto"); }).find("'auto' is not a communicator"), std::string::npos);
    EXPECT_NE(input_error_of([&] { rt.communicator("nccl"); }).find("unknown backend 'nccl'"), std::string::npos);
    EXPECT_NE(input_error_of([&] { rt.communicator("gloo"); }).find("backend 'gloo' is not initialised"),
              std::string::npos);
    EXPECT_NE(input_error_of([&] { rt.communicator("shm:nonesuch"); }).find("has no barrier algorithm 'nonesuch'"),
              std::string::npos);
    EXPECT_NE(input_error_of([&] { Communicator().issue(calls::barrier()); }).find("no communicator"),
              std::string::npos);
  });
}

// The runtime ends when spawn's function returns: a handle kept past it is refused, not used.
TEST(Communicator, AHandleUsedAfterItsRuntimeEndedIsRefused) {
  Communicator kept;
  testing::spawn(1, {"shm"}, [&](Runtime& rt, int) {
    kept = rt.communicator("shm");
    EXPECT_EQ(kept.size(), 1);
  });
  EXPECT_NE(input_error_of([&] {
              kept.issue(calls::barrier());
            }).find("communicator 'shm' is used after its runtime ended (finalize())"),
            std::string::npos);
  EXPECT_NE(input_error_of([&] { (void)kept.rank(); }).find("after its runtime ended"), std::string::npos);
}

}  // namespace
}  // namespace chorus::rt
