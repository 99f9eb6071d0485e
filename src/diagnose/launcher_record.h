#pragma once
// `launcher.json`: what `chorus launch` saw of every rank when it collected the ranks' flight
// records (a stall, or a failed rank): its process state, whether it dumped, its beacon. Written
// by the launcher (src/launch/job_dumps.cpp), read by the doctor. Format "chorus-launcher-record"
// version 1; every error of the reader names the file and the field.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace chorus::diagnose {

inline constexpr const char* kLauncherFormat = "chorus-launcher-record";
inline constexpr const char* kLauncherFile = "launcher.json";

// A rank's beacon as the launcher last read it.
struct BeaconSnapshot {
  std::string place;  // starting | running | in_finalize | finalized
  std::int64_t since_ns = 0;
  std::uint64_t started = 0, ended = 0;
};

struct LauncherRank {
  int rank = 0;
  std::int64_t pid = 0;
  std::string state;  // running | stopped | exited | killed
  std::optional<int> exit_status, signal;
  bool dumped = false;
  std::optional<BeaconSnapshot> beacon;
};

struct LauncherRecord {
  std::string job;
  std::string reason;           // stall | rank_failure
  double stall_timeout_s = 0;   // 0: off
  int failed_rank = -1;         // with rank_failure: the first rank that failed
  std::int64_t written_ns = 0;  // CLOCK_MONOTONIC
  std::vector<LauncherRank> ranks;
  const LauncherRank* find(int rank) const;
};

nlohmann::json to_json(const LauncherRecord& record);
LauncherRecord parse_launcher_record(const nlohmann::json& j, const std::string& file);
LauncherRecord read_launcher_record(const std::string& path);

}  // namespace chorus::diagnose
