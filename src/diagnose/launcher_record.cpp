#include "diagnose/launcher_record.h"

#include <fmt/format.h>

#include "core/error.h"
#include "diagnose/flight_dump.h"
#include "core/text_file.h"

namespace chorus::diagnose {

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& field, const std::string& what) {
  throw InputError(file, fmt::format("field '{}': {}", field, what));
}

const nlohmann::json& at(const nlohmann::json& j, const std::string& key, const std::string& file,
                         const std::string& path) {
  if (!j.is_object()) fail(file, path, "expected an object");
  if (!j.contains(key)) fail(file, path.empty() ? key : path + "." + key, "missing");
  return j.at(key);
}

template <typename T>
T get(const nlohmann::json& j, const std::string& key, const std::string& file, const std::string& path) {
  const auto& v = at(j, key, file, path);
  const std::string field = path.empty() ? key : path + "." + key;
  if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) fail(file, field, fmt::format("expected a string, got {}", v.dump()));
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) fail(file, field, fmt::format("expected true or false, got {}", v.dump()));
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) fail(file, field, fmt::format("expected a number, got {}", v.dump()));
  } else {
    if (!v.is_number_integer() ||
        (std::is_signed_v<T> && v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX) ||
        (std::is_unsigned_v<T> && !v.is_number_unsigned()))
      fail(file, field, fmt::format("expected an integer, got {}", v.dump()));
  }
  return v.get<T>();
}

std::optional<int> optional_int(const nlohmann::json& j, const std::string& key, const std::string& file,
                                const std::string& path) {
  if (at(j, key, file, path).is_null()) return std::nullopt;
  const auto x = get<std::int64_t>(j, key, file, path);
  if (x < 0 || x > 255) fail(file, path + "." + key, fmt::format("{} is out of range 0..255", x));
  return static_cast<int>(x);
}

LauncherRank parse_rank(const nlohmann::json& r, const std::string& file, const std::string& path) {
  LauncherRank x;
  x.rank = static_cast<int>(get<std::int64_t>(r, "rank", file, path));
  x.pid = get<std::int64_t>(r, "pid", file, path);
  x.state = get<std::string>(r, "state", file, path);
  if (x.state != "running" && x.state != "stopped" && x.state != "exited" && x.state != "killed")
    fail(file, path + ".state", fmt::format("'{}' is none of running, stopped, exited, killed", x.state));
  x.exit_status = optional_int(r, "exit_status", file, path);
  x.signal = optional_int(r, "signal", file, path);
  x.dumped = get<bool>(r, "dumped", file, path);
  const auto& b = at(r, "beacon", file, path);
  if (!b.is_null()) {
    const std::string bp = path + ".beacon";
    BeaconSnapshot s;
    s.place = get<std::string>(b, "place", file, bp);
    s.since_ns = get<std::int64_t>(b, "since_ns", file, bp);
    s.started = get<std::uint64_t>(b, "started", file, bp);
    s.ended = get<std::uint64_t>(b, "ended", file, bp);
    x.beacon = s;
  }
  return x;
}

}  // namespace

const LauncherRank* LauncherRecord::find(int rank) const {
  for (const auto& r : ranks)
    if (r.rank == rank) return &r;
  return nullptr;
}

nlohmann::json to_json(const LauncherRecord& record) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : record.ranks) {
    nlohmann::json beacon = nullptr;
    if (r.beacon)
      beacon = {{"place", r.beacon->place},
                {"since_ns", r.beacon->since_ns},
                {"started", r.beacon->started},
                {"ended", r.beacon->ended}};
    ranks.push_back({{"rank", r.rank},
                     {"pid", r.pid},
                     {"state", r.state},
                     {"exit_status", r.exit_status ? nlohmann::json(*r.exit_status) : nlohmann::json(nullptr)},
                     {"signal", r.signal ? nlohmann::json(*r.signal) : nlohmann::json(nullptr)},
                     {"dumped", r.dumped},
                     {"beacon", beacon}});
  }
  return {{"format", kLauncherFormat},
          {"version", 1},
          {"job", record.job},
          {"reason", record.reason},
          {"stall_timeout_s", record.stall_timeout_s},
          {"failed_rank", record.failed_rank},
          {"written_ns", record.written_ns},
          {"ranks", ranks}};
}

LauncherRecord parse_launcher_record(const nlohmann::json& j, const std::string& file) {
  if (get<std::string>(j, "format", file, "") != kLauncherFormat)
    fail(file, "format", fmt::format("expected '{}'", kLauncherFormat));
  if (get<std::int64_t>(j, "version", file, "") != 1) fail(file, "version", "expected 1");
  LauncherRecord x;
  x.job = get<std::string>(j, "job", file, "");
  x.reason = get<std::string>(j, "reason", file, "");
  if (x.reason != "stall" && x.reason != "rank_failure")
    fail(file, "reason", fmt::format("'{}' is neither stall nor rank_failure", x.reason));
  x.stall_timeout_s = get<double>(j, "stall_timeout_s", file, "");
  x.failed_rank = static_cast<int>(get<std::int64_t>(j, "failed_rank", file, ""));
  x.written_ns = get<std::int64_t>(j, "written_ns", file, "");
  const auto& ranks = at(j, "ranks", file, "");
  if (!ranks.is_array()) fail(file, "ranks", "expected an array");
  if (ranks.size() > static_cast<std::size_t>(kMaxWorldSize))
    fail(file, "ranks", fmt::format("{} ranks, more than {}", ranks.size(), kMaxWorldSize));
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    x.ranks.push_back(parse_rank(ranks[i], file, fmt::format("ranks[{}]", i)));
    if (x.ranks.back().rank != static_cast<int>(i))
      fail(file, fmt::format("ranks[{}].rank", i),
           fmt::format("{}: the ranks must be listed in order", x.ranks.back().rank));
  }
  return x;
}

LauncherRecord read_launcher_record(const std::string& path) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_text_file(path, "the launcher's record"));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path, fmt::format("not JSON: {}", e.what()));
  }
  return parse_launcher_record(j, path);
}

}  // namespace chorus::diagnose
