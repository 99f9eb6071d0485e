#include "workload/capture/window_collectives.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/text_file.h"

namespace chorus::workload::capture {

namespace {

std::vector<int> group_of(const std::string& label, const RankRecord& record, int world, const std::string& where) {
  // The chorus torch backend logs a sub-group's operations under "torch/<group name>", the
  // world's under its backend's name (with an algorithm's, "shm:ring").
  if (label.rfind("torch/", 0) != 0) {
    std::vector<int> all(static_cast<std::size_t>(world));
    for (int r = 0; r < world; ++r) all[static_cast<std::size_t>(r)] = r;
    return all;
  }
  for (const auto& g : record.groups)
    if (g.label == label) return g.ranks;
  throw InputError(where, fmt::format("field 'backend': group '{}' is not among the groups rank {} created (its "
                                      "record lists {})",
                                      label, record.rank, record.groups.size()));
}

}  // namespace

std::vector<WindowCollective> window_collectives(const std::string& log_path, const RankRecord& record, int world) {
  std::istringstream in(read_text_file(log_path, "the communication log"));
  std::vector<WindowCollective> out;
  std::string text;
  std::size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    const auto where = fmt::format("{}:{}", log_path, line);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(where, fmt::format("not JSON (a truncated communication log?): {}", e.what()));
    }
    if (!j.is_object()) throw InputError(where, "every line must be a JSON object");
    if (line == 1) {
      if (!j.contains("chorus_comm_log")) throw InputError(where, "missing field 'chorus_comm_log' (the log's header)");
      continue;
    }
    const auto issue = json_fields::get<std::int64_t>(j, "issue_ns", where);
    if (issue < record.window_start_ns || issue > record.window_end_ns) continue;
    WindowCollective c;
    const auto op = json_fields::get<std::string>(j, "op", where);
    const auto kind = find_collective_kind(op, kAllCollectiveKinds);
    if (!kind) throw InputError(where, fmt::format("field 'op': unknown operation '{}'", op));
    c.op = *kind;
    c.bytes = static_cast<double>(json_fields::get<std::uint64_t>(j, "bytes", where));
    c.label = json_fields::get<std::string>(j, "backend", where);
    c.ranks = group_of(c.label, record, world, where);
    c.line = line;
    c.issue_ns = issue;
    if (j.contains("start_ns") && j.contains("end_ns")) {
      c.start_ns = json_fields::get<std::int64_t>(j, "start_ns", where);
      c.end_ns = json_fields::get<std::int64_t>(j, "end_ns", where);
    }
    out.push_back(std::move(c));
  }
  // Lines are written as operations end; the program issued them in issue order.
  std::stable_sort(out.begin(), out.end(),
                   [](const WindowCollective& a, const WindowCollective& b) { return a.issue_ns < b.issue_ns; });
  if (line == 0) throw InputError(log_path, "is empty: no header line (the rank did not start its runtime?)");
  return out;
}

}  // namespace chorus::workload::capture
