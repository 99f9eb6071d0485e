// Unit tests of chorus::rt that need one process: dtype arithmetic, parsing, the tuning
// table, the rendezvous store, the progress queue and the runtime in a world of one.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <thread>

#include "core/error.h"
#include "rt/dtype.h"
#include "rt/buffer_pool.h"
#include "rt/compression/call_compression.h"
#include "rt/errors.h"
#include "rt/fusion/fusion.h"
#include "rt/progress_queue.h"
#include "rt/runtime.h"
#include "rt/rendezvous/store.h"
#include "rt/rendezvous/tcp_store.h"
#include "rt/tuning_table.h"
#include "rt_bench/selfcheck.h"

using chorus::CollectiveKind;

namespace rt = chorus::rt;
using rt::DType;
using rt::ReduceOp;
namespace selfcheck = chorus::rt::selfcheck;

TEST(Dtype, HalfKnownValues) {
  EXPECT_EQ(rt::f32_to_f16(1.0f), 0x3C00);
  EXPECT_EQ(rt::f32_to_f16(-2.0f), 0xC000);
  EXPECT_EQ(rt::f32_to_f16(65504.0f), 0x7BFF);
  EXPECT_EQ(rt::f32_to_f16(65520.0f), 0x7C00);    // rounds to infinity
  EXPECT_EQ(rt::f32_to_f16(0x1.0p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(rt::f32_to_f16(0x1.0p-25f), 0x0000);  // tie to even: zero
  EXPECT_EQ(rt::f32_to_f16(0.1f), 0x2E66);
  EXPECT_EQ(rt::f32_to_f16(1.0f + 0x1.0p-11f), 0x3C00);  // tie to even (down)
  EXPECT_EQ(rt::f32_to_f16(1.0f + 0x1.8p-10f), 0x3C02);  // tie to even (up)
  EXPECT_FLOAT_EQ(rt::f16_to_f32(0x3555), 0.333251953125f);
}

TEST(Dtype, HalfRoundTripsEveryPattern) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if ((bits & 0x7C00) == 0x7C00 && (bits & 0x3FF) != 0) continue;  // NaN payloads
    ASSERT_EQ(rt::f32_to_f16(rt::f16_to_f32(bits)), bits) << std::hex << h;
  }
}

TEST(Dtype, Bfloat16RoundsToNearestEvenAndRoundTripsEveryNonNanPattern) {
  EXPECT_EQ(rt::f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(rt::f32_to_bf16(1.0f + 0x1.0p-8f), 0x3F80);  // tie to even
  EXPECT_EQ(rt::f32_to_bf16(1.0f + 0x1.8p-7f), 0x3F82);
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if ((bits & 0x7F80) == 0x7F80 && (bits & 0x7F) != 0) continue;
    ASSERT_EQ(rt::f32_to_bf16(rt::bf16_to_f32(bits)), bits) << std::hex << h;
  }
}

TEST(Dtype, HalfIsReducedAsNumbersNotBytes) {
  const std::uint16_t a[2] = {rt::f32_to_f16(1.0f), rt::f32_to_f16(3.5f)};
  const std::uint16_t b[2] = {rt::f32_to_f16(2.0f), rt::f32_to_f16(-0.5f)};
  std::uint16_t out[2];
  rt::reduce_into(DType::f16, ReduceOp::sum, out, a, b, 2);
  EXPECT_EQ(rt::f16_to_f32(out[0]), 3.0f);  // bytes 0x3C00 + 0x4000 would be infinity
  EXPECT_EQ(rt::f16_to_f32(out[1]), 3.0f);
  rt::reduce_into(DType::f16, ReduceOp::max, out, a, b, 2);
  EXPECT_EQ(rt::f16_to_f32(out[0]), 2.0f);
  EXPECT_EQ(rt::f16_to_f32(out[1]), 3.5f);
  const std::uint16_t c[1] = {rt::f32_to_bf16(-3.0f)}, d[1] = {rt::f32_to_bf16(0.5f)};
  rt::reduce_into(DType::bf16, ReduceOp::prod, out, c, d, 1);
  EXPECT_EQ(rt::bf16_to_f32(out[0]), -1.5f);
  rt::reduce_into(DType::bf16, ReduceOp::min, out, c, d, 1);
  EXPECT_EQ(rt::bf16_to_f32(out[0]), -3.0f);
}

TEST(Dtype, MaxIsNotSumAndIntegersWrap) {
  const std::int8_t a[3] = {100, -5, 7}, b[3] = {100, 3, -9};
  std::int8_t out[3];
  rt::reduce_into(DType::i8, ReduceOp::max, out, a, b, 3);
  EXPECT_EQ(out[0], 100);
  EXPECT_EQ(out[1], 3);
  EXPECT_EQ(out[2], 7);
  rt::reduce_into(DType::i8, ReduceOp::sum, out, a, b, 3);
  EXPECT_EQ(out[0], -56);  // wraps modulo 2^8
  const std::int64_t big[1] = {INT64_MAX}, one[1] = {1};
  std::int64_t w[1];
  rt::reduce_into(DType::i64, ReduceOp::sum, w, big, one, 1);
  EXPECT_EQ(w[0], INT64_MIN);
  std::int32_t v[2] = {-7, 7};
  rt::divide_by(DType::i32, v, 2, 2);
  EXPECT_EQ(v[0], -3);  // truncates toward zero
  EXPECT_EQ(v[1], 3);
  double f[1] = {5.0};
  rt::divide_by(DType::f64, f, 1, 4);
  EXPECT_EQ(f[0], 1.25);
}

TEST(Dtype, AvgOfIntegersTruncatesTowardZeroInEveryWidth) {
  // The avg finish (sum / ranks) by hand: C++ integer division, never floor, never rounding.
  std::int8_t i8[3] = {-128, 127, -1};
  rt::divide_by(DType::i8, i8, 3, 3);
  EXPECT_EQ(i8[0], -42);  // floor would give -43
  EXPECT_EQ(i8[1], 42);
  EXPECT_EQ(i8[2], 0);
  std::uint8_t u8[2] = {255, 2};
  rt::divide_by(DType::u8, u8, 2, 4);
  EXPECT_EQ(u8[0], 63);  // rounding would give 64
  EXPECT_EQ(u8[1], 0);
  std::int64_t i64[2] = {INT64_MIN, -9};
  rt::divide_by(DType::i64, i64, 2, 4);
  EXPECT_EQ(i64[0], INT64_MIN / 4);
  EXPECT_EQ(i64[1], -2);
  std::uint16_t h[1] = {rt::f32_to_f16(3.0f)};
  rt::divide_by(DType::f16, h, 1, 2);
  EXPECT_EQ(rt::f16_to_f32(h[0]), 1.5f);  // floating types divide exactly
}

TEST(Parse, NamesAndAliasesParseAndUnknownNamesAreInputErrors) {
  EXPECT_EQ(rt::parse_dtype("bf16", "x"), DType::bf16);
  EXPECT_EQ(rt::parse_reduce_op("avg", "x"), ReduceOp::avg);
  EXPECT_EQ(rt::parse_op_kind("allreduce", "x"), CollectiveKind::kAllReduce);
  EXPECT_EQ(rt::parse_op_kind("all_to_allv", "x"), CollectiveKind::kAllToAllv);
  // The runtime's own aliases: "a2a" is nccl-tests' all-to-all, over one buffer.
  EXPECT_EQ(rt::parse_op_kind("a2a", "x"), CollectiveKind::kAllToAllSingle);
  EXPECT_EQ(rt::parse_op_kind("bcast", "x"), CollectiveKind::kBroadcast);
  EXPECT_THROW(rt::parse_op_kind("allreduc", "x"), chorus::InputError);
  EXPECT_THROW(rt::parse_dtype("f8", "--dtype"), chorus::InputError);
  try {
    rt::parse_reduce_op("mean", "--op");
    FAIL();
  } catch (const chorus::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sum, prod, min, max, avg"), std::string::npos);
  }
}

TEST(TuningTable, PicksFastestAllowedAtNearestSizeBelow) {
  const auto path = std::filesystem::temp_directory_path() / "chorus_rt_tuning_test.json";
  {
    std::ofstream f(path);
    f << R"({"schema": "chorus-rt-tuning/1", "machine": "test", "tables": [
      {"op": "all_reduce", "world_size": 4, "rows": [
        {"bytes": 1024, "best": "mpi", "time_us": {"mpi": 5, "shm": 7, "gloo": 90}},
        {"bytes": 1048576, "best": "shm", "time_us": {"mpi": 200, "shm": 80, "gloo": 900}}]}]})";
  }
  const auto t = rt::TuningTable::load(path.string());
  const std::vector<std::string> all = {"shm", "mpi", "gloo"};
  EXPECT_EQ(t.pick(CollectiveKind::kAllReduce, 4, 10, all), "mpi");  // below the smallest row
  EXPECT_EQ(t.pick(CollectiveKind::kAllReduce, 4, 4096, all), "mpi");
  EXPECT_EQ(t.pick(CollectiveKind::kAllReduce, 4, 1 << 24, all), "shm");
  EXPECT_EQ(t.pick(CollectiveKind::kAllReduce, 4, 1 << 24, {"gloo", "mpi"}), "mpi");
  EXPECT_FALSE(t.pick(CollectiveKind::kAllReduce, 2, 4096, all).has_value());
  EXPECT_FALSE(t.pick(CollectiveKind::kBroadcast, 4, 4096, all).has_value());
  t.save(path.string());
  EXPECT_EQ(rt::TuningTable::load(path.string()).to_json(), t.to_json());
  {
    std::ofstream f(path);
    f << R"({"schema": "chorus-rt-tuning/1", "tables": [], "colour": 1})";
  }
  EXPECT_THROW(rt::TuningTable::load(path.string()), chorus::InputError);
  std::filesystem::remove(path);
}

TEST(TuningTable, RowsOfAlgorithmOperationsMayNameAlgorithms) {
  auto parse = [](const std::string& op, const std::string& key) {
    return rt::TuningTable::parse(R"({"schema": "chorus-rt-tuning/1", "tables": [{"op": ")" + op +
                                      R"(", "world_size": 2, "rows": [{"bytes": 0, "best": "x", "time_us": {")" + key +
                                      R"(": 3, "shm": 5}}]}]})",
                                  "t.json");
  };
  const auto t = parse("all_reduce", "mpi:basic_linear");
  EXPECT_EQ(t.pick(CollectiveKind::kAllReduce, 2, 8, {"shm", "mpi"}), "mpi:basic_linear");
  EXPECT_EQ(t.pick(CollectiveKind::kAllReduce, 2, 8, {"shm", "gloo"}), "shm");  // mpi not initialised
  for (const std::string bad : {"mpi:", "nccl", "nccl:ring", "mpi:Ring", "mpi:ring-2", ""}) {
    EXPECT_THROW(parse("all_reduce", bad), chorus::InputError) << bad;
  }
  EXPECT_EQ(parse("all_gather", "mpi:bruck").pick(CollectiveKind::kAllGather, 2, 8, {"mpi"}), "mpi:bruck");
  EXPECT_EQ(parse("broadcast", "mpi:binomial").pick(CollectiveKind::kBroadcast, 2, 8, {"mpi"}), "mpi:binomial");
  try {
    parse("gather", "mpi:ring");
    FAIL();
  } catch (const chorus::InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("'mpi:ring': only the rows of all_reduce, broadcast, all_gather, reduce_scatter, "
                                   "all_to_all_single name algorithms"),
        std::string::npos)
        << e.what();
  }
}

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

TEST(Runtime, UnknownBackendIsAnInputErrorAndAWorldOfOneRuns) {
  try {
    rt::init({"shm", "nccl"});
    FAIL();
  } catch (const chorus::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("available: shm, mpi, gloo"), std::string::npos);
  }
  EXPECT_FALSE(rt::is_initialized());
  rt::init({"gloo", "shm"});
  EXPECT_EQ(rt::backends(), (std::vector<std::string>{"shm", "gloo"}));
  EXPECT_EQ(rt::size("shm"), 1);
  EXPECT_EQ(rt::rank("gloo"), 0);
  EXPECT_EQ(rt::resolve_backend("auto", CollectiveKind::kAllReduce, 1 << 20), "shm");
  EXPECT_THROW(rt::init({"shm"}), chorus::InputError);
  // In a world of one every reduction is the identity (avg over several ranks, where it differs
  // from sum, is checked by rt_check for every reduce operation at 2 and 4 ranks).
  std::vector<float> x = {1, 2, 3}, y(3);
  auto w = rt::all_reduce("gloo", x.data(), y.data(), 3, DType::f32, ReduceOp::sum, true);
  w.wait();
  EXPECT_EQ(y, x);
  EXPECT_THROW(rt::all_reduce("mpi", x.data(), y.data(), 3, DType::f32, ReduceOp::sum), chorus::InputError);
  try {
    rt::barrier("nccl");
    FAIL();
  } catch (const chorus::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown backend 'nccl'"), std::string::npos);
  }
  EXPECT_THROW(rt::broadcast("shm", x.data(), 3, DType::f32, 1), chorus::InputError);  // root 1 of 1
  EXPECT_THROW(rt::all_gatherv("shm", x.data(), 3, y.data(), {2}, {0}, DType::f32), chorus::InputError);
  rt::synchronize();
  rt::finalize();
  EXPECT_FALSE(rt::is_initialized());
}

// The one buffer pool: a buffer comes back when its handle dies and is reused for a request it
// fits at most 4 times over; the oldest go first past the limits; one larger than max_bytes, or
// outliving its pool, is freed.
TEST(BufferPool, ReusesFittingBuffersWithinItsLimits) {
  auto pool = rt::BufferPool::make({.max_buffers = 2, .max_bytes = 1000});
  std::byte* first = nullptr;
  {
    auto b = pool->take(100);
    first = b.get();
  }
  EXPECT_EQ(pool->free_buffers(), 1u);
  EXPECT_EQ(pool->free_bytes(), 100u);
  {
    auto b = pool->take(30);  // 100 <= 4 x 30: the same memory
    EXPECT_EQ(b.get(), first);
    EXPECT_EQ(pool->free_buffers(), 0u);
    auto c = pool->take(20);  // 100 > 4 x 20 (and in use anyway): new memory
    EXPECT_NE(c.get(), first);
  }
  EXPECT_EQ(pool->free_bytes(), 120u);
  {
    auto a = pool->take(400), b = pool->take(500), c = pool->take(600);
  }  // back in the order c, b, a: {100, 20} + 600 drops 100 (3 buffers); + 500 drops 20, then 600
     // (1,100 bytes); + 400 leaves {500, 400}
  EXPECT_EQ(pool->free_buffers(), 2u);
  EXPECT_EQ(pool->free_bytes(), 900u);
  { auto big = pool->take(5000); }
  EXPECT_EQ(pool->free_bytes(), 900u) << "a buffer over max_bytes is not kept";
  auto survivor = pool->take(64);
  pool.reset();  // the buffer outlives its pool: freed by its handle (ASan checks)
  survivor.get()[63] = std::byte{1};
}

// Tensor fusion takes any operation it fuses as a Call, and refuses the others by name: those it
// does not fuse, and compressed calls (compression is the runtime's, not the fusion's).
TEST(Fusion, IssuesTheCallsItFusesAndRefusesTheOthers) {
  rt::init({"shm"});
  {
    rt::Fusion fusion({"shm"});
    std::vector<float> x = {1, 2, 3}, y(3);
    fusion.issue("shm", rt::calls::all_reduce(x.data(), y.data(), 3, DType::f32, ReduceOp::sum)).wait();
    EXPECT_EQ(y, x);  // a world of one
    std::vector<float> z(3);
    fusion.issue("shm", rt::calls::all_to_allv(x.data(), {3}, {0}, z.data(), {3}, {0}, DType::f32)).wait();
    EXPECT_EQ(z, x);
    const auto refusal = [&](rt::Call call) {
      try {
        fusion.issue("shm", std::move(call));
      } catch (const chorus::InputError& e) {
        return std::string(e.what());
      }
      return std::string("accepted");
    };
    EXPECT_NE(refusal(rt::calls::barrier()).find("fused barrier: is not fused"), std::string::npos);
    EXPECT_NE(refusal(rt::calls::all_gatherv(x.data(), 3, y.data(), {3}, {0}, DType::f32)).find("is not fused"),
              std::string::npos);
    EXPECT_NE(refusal(rt::compressed_call(rt::calls::all_reduce(x.data(), y.data(), 3, DType::f32, ReduceOp::sum),
                                          {rt::compressed::ErrorBound::Kind::kAbsolute, 1e-3}))
                  .find("a compressed call is not fused"),
              std::string::npos);
  }
  rt::finalize();
}

// The self-check that every multi-process test relies on finds a wrong byte anywhere in a
// result, and a changed sentinel in a gap between results (all_gatherv leaves room between
// the blocks: those bytes must not be written), and names the element.
TEST(SelfCheck, FindsAWrongByteAndNamesTheElement) {
  rt::init({"shm"});
  {
    selfcheck::Case c("shm", CollectiveKind::kAllReduce, DType::f32, ReduceOp::sum, 1000, 7);
    c.issue(false);
    EXPECT_EQ(c.verify(), "");
    c.result()[4 * 123 + 2] ^= 1;
    EXPECT_NE(c.verify().find("element 123:"), std::string::npos) << c.verify();
    c.result()[4 * 123 + 2] ^= 1;
    c.result().back() ^= 0x40;
    EXPECT_NE(c.verify().find("element 999:"), std::string::npos) << c.verify();
  }
  {
    selfcheck::Case c("shm", CollectiveKind::kAllGatherv, DType::i32, ReduceOp::sum, 10, 0);
    c.issue(false);
    EXPECT_EQ(c.verify(), "");
    const std::vector<char> good = c.result();
    for (std::size_t i = 0; i < good.size(); ++i) {  // every byte, the gaps included
      c.result()[i] ^= 1;
      EXPECT_NE(c.verify().find(fmt::format("element {}:", i / 4)), std::string::npos) << i;
      c.result()[i] ^= 1;
    }
  }
  rt::finalize();
}

// #wrong counts wrong elements, not bytes: three elements changed (one in two bytes) are three;
// every operation with an in-place form checks out in place, and says so.
TEST(SelfCheck, CountsWrongElementsAndRunsInPlace) {
  rt::init({"shm"});
  {
    selfcheck::Case c("shm", CollectiveKind::kAllReduce, DType::f32, ReduceOp::sum, 1000, 0,
                      selfcheck::Placement::kOutOfPlace);
    c.issue(false);
    EXPECT_EQ(c.wrong_elements(), 0u);
    c.result()[4 * 3] ^= 1;
    c.result()[4 * 3 + 3] ^= 1;
    c.result()[4 * 10 + 1] ^= 1;
    c.result()[4 * 999 + 2] ^= 1;
    EXPECT_EQ(c.wrong_elements(), 3u);
    EXPECT_EQ(c.describe().find("in place"), std::string::npos);
  }
  for (CollectiveKind op :
       {CollectiveKind::kAllReduce, CollectiveKind::kReduce, CollectiveKind::kAllGather, CollectiveKind::kAllGatherv}) {
    ASSERT_TRUE(selfcheck::has_in_place(op));
    selfcheck::Case c("shm", op, DType::i32, ReduceOp::sum, 10, 0, selfcheck::Placement::kInPlace);
    c.issue(false);
    EXPECT_EQ(c.verify(), "") << c.describe();
    EXPECT_EQ(c.wrong_elements(), 0u) << c.describe();
    EXPECT_NE(c.describe().find("in place"), std::string::npos) << c.describe();
  }
  EXPECT_FALSE(selfcheck::has_in_place(CollectiveKind::kBroadcast));  // one buffer: no second form
  EXPECT_FALSE(selfcheck::has_in_place(CollectiveKind::kReduceScatter));
  rt::finalize();
}

// Named all-reduce algorithms: listed per backend, run by "backend:algorithm", chosen by auto
// from a table that names them, logged under that name; misuse is an InputError.
TEST(Runtime, AllReduceAlgorithmsByName) {
  const auto dir = std::filesystem::temp_directory_path();
  const auto table = dir / "chorus_rt_algorithms_table.json";
  const auto log = dir / "chorus_rt_algorithms_log";
  {
    std::ofstream f(table);
    f << R"({"schema": "chorus-rt-tuning/1", "tables": [{"op": "all_reduce", "world_size": 1, "rows": [
          {"bytes": 0, "best": "shm", "time_us": {"shm": 1, "gloo:bcube": 2}},
          {"bytes": 1048576, "best": "gloo:bcube", "time_us": {"shm": 9, "gloo:bcube": 2, "gloo": 3}}]}]})";
  }
  rt::InitOptions options;
  options.tuning_table = table.string();
  options.log = log.string();
  rt::init({"gloo", "shm"}, options);
  // Gloo's two, then the runtime's ring over point-to-point; shm has only the latter.
  EXPECT_EQ(rt::algorithm_names("gloo", CollectiveKind::kAllReduce),
            (std::vector<std::string>{"ring", "bcube", "ring_p2p"}));
  EXPECT_EQ(rt::algorithm_names("shm", CollectiveKind::kAllReduce), (std::vector<std::string>{"ring_p2p"}));
  // The other operations that take algorithms: the runtime's point-to-point one where the
  // operation is native (gloo's reduce_scatter is not: its default already is the ring);
  // none for the rest.
  EXPECT_EQ(rt::algorithm_names("gloo", CollectiveKind::kAllGather), (std::vector<std::string>{"ring_p2p"}));
  EXPECT_EQ(rt::algorithm_names("gloo", CollectiveKind::kBroadcast), (std::vector<std::string>{"linear_p2p"}));
  EXPECT_EQ(rt::algorithm_names("shm", CollectiveKind::kAllToAllSingle), (std::vector<std::string>{"pairwise_p2p"}));
  EXPECT_EQ(rt::algorithm_names("shm", CollectiveKind::kReduceScatter), (std::vector<std::string>{"ring_p2p"}));
  EXPECT_TRUE(rt::algorithm_names("gloo", CollectiveKind::kReduceScatter).empty());
  EXPECT_TRUE(rt::algorithm_names("shm", CollectiveKind::kGather).empty());
  EXPECT_EQ(rt::resolve_backend("auto", CollectiveKind::kAllReduce, 4096), "shm");
  EXPECT_EQ(rt::resolve_backend("auto", CollectiveKind::kAllReduce, 1 << 21), "gloo:bcube");
  std::vector<float> x = {1, 2, 3}, y(3);
  rt::all_reduce("gloo:bcube", x.data(), y.data(), 3, DType::f32, ReduceOp::sum);
  EXPECT_EQ(y, x);
  std::vector<float> big(1 << 19, 2.0f);  // 2 MiB: auto takes gloo:bcube
  rt::all_reduce("auto", big.data(), big.data(), big.size(), DType::f32, ReduceOp::sum, true).wait();
  EXPECT_EQ(big.back(), 2.0f);
  rt::all_reduce("shm:default", x.data(), y.data(), 3, DType::f32, ReduceOp::max);
  try {
    rt::all_reduce("gloo:halving", x.data(), y.data(), 3, DType::f32, ReduceOp::sum);
    FAIL();
  } catch (const chorus::InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("has no all_reduce algorithm 'halving' (it has: default, ring, bcube, ring_p2p)"),
        std::string::npos)
        << e.what();
  }
  try {
    rt::all_gather("gloo:ring", x.data(), y.data(), 3, DType::f32);
    FAIL();
  } catch (const chorus::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has no all_gather algorithm 'ring' (it has: default, ring_p2p)"),
              std::string::npos)
        << e.what();
  }
  try {
    rt::gather("gloo:ring_p2p", x.data(), y.data(), 3, DType::f32, 0);
    FAIL();
  } catch (const chorus::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gather takes no algorithm after the backend name"), std::string::npos)
        << e.what();
  }
  rt::all_gather("shm:ring_p2p", x.data(), y.data(), 3, DType::f32);
  EXPECT_EQ(y, x);
  EXPECT_EQ(rt::size("gloo:bcube"), 1);
  // A group name may hold ':': the exact name wins, an algorithm follows the last ':'.
  rt::split("rows:2", "shm", 0, 0);
  rt::all_reduce("rows:2", x.data(), y.data(), 3, DType::f32, ReduceOp::sum);
  rt::all_reduce("rows:2:ring_p2p", x.data(), y.data(), 3, DType::f32, ReduceOp::sum);
  EXPECT_EQ(y, x);
  EXPECT_THROW(rt::all_reduce("rows:3", x.data(), y.data(), 3, DType::f32, ReduceOp::sum), chorus::InputError);
  rt::finalize();
  std::ifstream in(log.string() + ".0.jsonl");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find(R"("backend":"gloo:ring")"), std::string::npos);
  EXPECT_NE(text.find(R"("backend":"gloo:bcube","op":"all_reduce","count":3,)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("backend":"gloo:bcube","op":"all_reduce","count":524288,)"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("backend":"shm","op":"all_reduce","count":3,)"), std::string::npos) << text;
  std::filesystem::remove(table);
  std::filesystem::remove(log.string() + ".0.jsonl");
}

TEST(Work, CompletionCallbacksRunOnceInOrderWithTheError) {
  auto state = std::make_shared<rt::WorkState>("test op", nullptr);
  rt::Work work(state);
  std::vector<std::string> seen;
  work.on_complete([&](std::exception_ptr e) { seen.push_back(e ? "first:error" : "first:ok"); });
  work.on_complete([&](std::exception_ptr e) { seen.push_back(e ? "second:error" : "second:ok"); });
  EXPECT_TRUE(seen.empty());  // not yet completed
  state->complete(std::make_exception_ptr(rt::CommError("peer died")));
  EXPECT_EQ(seen, (std::vector<std::string>{"first:error", "second:error"}));
  // Added after completion: runs at once, on this thread; a throwing callback changes nothing.
  work.on_complete([&](std::exception_ptr e) { seen.push_back(e ? "late:error" : "late:ok"); });
  work.on_complete([](std::exception_ptr) { throw std::runtime_error("ignored"); });
  EXPECT_EQ(seen.back(), "late:error");
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_THROW(work.wait(), rt::CommError);
  bool ran = false;
  rt::Work().on_complete([&](std::exception_ptr e) { ran = e == nullptr; });  // an already completed Work
  EXPECT_TRUE(ran);
}

TEST(Runtime, ExternalWorldIsUsedAndChecked) {
  auto world = std::make_shared<rt::ExternalWorld>();
  world->rank = 1;
  world->size = 1;
  world->store = std::make_shared<rt::InMemoryStore>();
  rt::InitOptions options;
  options.world = world;
  try {
    rt::init({"shm"}, options);
    FAIL();
  } catch (const chorus::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 of a world of 1"), std::string::npos) << e.what();
  }
  world->rank = 0;
  world->store = nullptr;
  EXPECT_THROW(rt::init({"shm"}, options), chorus::InputError);
  EXPECT_FALSE(rt::is_initialized());
  world->store = std::make_shared<rt::InMemoryStore>();
  // "auto" under a caller's world of one: mpi is possible only under mpirun, so without it the
  // world is shm and gloo; the store carries the bootstrap's keys (the run id, host names).
  rt::init({"shm", "gloo"}, options);
  EXPECT_EQ(rt::size("shm"), 1);
  std::vector<double> x = {1.5, -2}, y(2);
  rt::all_reduce("shm", x.data(), y.data(), 2, DType::f64, ReduceOp::max);
  EXPECT_EQ(y, x);
  EXPECT_FALSE(world->store->get_string("chorus/1/run_id", std::chrono::milliseconds(10)).empty());
  EXPECT_EQ(world->store->add("chorus/init/0", 0), 1);  // one init on this store so far
  rt::finalize();
  rt::init({"gloo"}, options);  // a second init on the same store takes fresh keys
  EXPECT_EQ(world->store->add("chorus/init/0", 0), 2);
  rt::finalize();
}

TEST(Runtime, MemberGroupIsMadeByItsMembersAlone) {
  rt::init({"shm", "gloo"});
  auto message = [](auto&& fn) {
    try {
      fn();
    } catch (const chorus::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { rt::member_group("g", {1}, "shm"); }).find("ranks[0] = 1 is not a rank"), std::string::npos);
  EXPECT_NE(message([] { rt::member_group("g", {0, 0}, "shm"); }).find("listed twice"), std::string::npos);
  EXPECT_NE(message([] { rt::member_group("g", {0}, "mpi"); }).find("shm or gloo"), std::string::npos);
  EXPECT_NE(message([] { rt::member_group("shm", {0}, "shm"); }).find("cannot name a group"), std::string::npos);
  rt::member_group("torch/1", {0}, "auto");  // one host: shm
  EXPECT_EQ(rt::size("torch/1"), 1);
  EXPECT_EQ(rt::group_ranks("torch/1"), std::vector<int>{0});
  EXPECT_NE(message([] { rt::member_group("torch/1", {0}, "gloo"); }).find("exists already"), std::string::npos);
  std::vector<std::int32_t> x = {3, -4}, y(2);
  rt::all_reduce("torch/1", x.data(), y.data(), 2, DType::i32, ReduceOp::sum);
  EXPECT_EQ(y, x);
  rt::finalize();
}
