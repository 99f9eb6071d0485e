// The runtime in a world of one and in an external world: rt/runtime.h's facade, names and
// groups, named algorithms, and Work's completion callbacks.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "rt/errors.h"
#include "rt/rendezvous/store.h"
#include "rt/runtime.h"

using chorus::CollectiveKind;

namespace rt = chorus::rt;
using rt::DType;
using rt::ReduceOp;

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
