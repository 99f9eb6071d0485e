// rt/tuning_table.h: what "auto" picks from a measured table.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"
#include "rt/tuning_table.h"

using chorus::CollectiveKind;

namespace rt = chorus::rt;
using rt::DType;
using rt::ReduceOp;

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
