#include "workload/capture/capture_manifest.h"

#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/text_file.h"

namespace chorus::workload::capture {

namespace {

using nlohmann::json;
namespace jf = json_fields;

json parse(const std::string& path, const std::string& what) {
  const auto text = read_text_file(path, what);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(path, fmt::format("not JSON (a truncated or corrupt {}?): {}", what, e.what()));
  }
}

const json& object_field(const json& j, const std::string& key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_object())
    throw InputError(where, fmt::format("field '{}' must be an object", key));
  return j[key];
}

}  // namespace

bool is_capture_dir(const std::string& spec) {
  std::error_code ec;
  return std::filesystem::is_directory(spec, ec) &&
         std::filesystem::is_regular_file(std::filesystem::path(spec) / "manifest.json", ec);
}

Manifest read_manifest(const std::string& dir) {
  Manifest m;
  m.dir = dir;
  m.path = (std::filesystem::path(dir) / "manifest.json").string();
  const json j = parse(m.path, "capture manifest");
  if (!j.is_object()) throw InputError(m.path, "must be a JSON object");
  if (jf::get<int>(j, "chorus_capture", m.path) != 1)
    throw InputError(m.path, "field 'chorus_capture': this chorus reads version 1");
  m.complete = jf::get<bool>(j, "complete", m.path);
  if (!m.complete) {
    const auto why = j.contains("error") && j["error"].is_string() ? j["error"].get<std::string>() : "unknown";
    throw InputError(m.path, fmt::format("field 'complete': false, a partial capture ({}); capture it again", why));
  }
  m.world = jf::get<int>(j, "world", m.path);
  if (m.world < 1) throw InputError(m.path, fmt::format("field 'world' must be >= 1, got {}", m.world));
  m.backend = jf::get<std::string>(j, "backend", m.path);
  const auto& steps = object_field(j, "steps", m.path);
  const auto window = jf::get<std::vector<int>>(steps, "window", m.path + ": steps");
  if (window.size() != 2 || window[0] < 1 || window[1] <= window[0])
    throw InputError(m.path, "field 'steps.window' must be [A, B] with 1 <= A < B");
  m.first_step = window[0];
  m.last_step = window[1];
  if (!j.contains("ranks") || !j["ranks"].is_array())
    throw InputError(m.path, "field 'ranks' must be a list of the ranks' files");
  if (j["ranks"].size() != static_cast<std::size_t>(m.world))
    throw InputError(m.path,
                     fmt::format("field 'ranks' lists {} ranks, field 'world' says {}", j["ranks"].size(), m.world));
  for (std::size_t k = 0; k < j["ranks"].size(); ++k) {
    const auto& r = j["ranks"][k];
    const auto where = fmt::format("{}: ranks[{}]", m.path, k);
    if (!r.is_object()) throw InputError(where, "must be an object");
    RankFiles f;
    f.rank = jf::get<int>(r, "rank", where);
    if (f.rank != static_cast<int>(k))
      throw InputError(where, fmt::format("field 'rank' must be {}, got {}", k, f.rank));
    auto file = [&](const char* key) {
      const auto name = jf::get<std::string>(r, key, where);
      const auto path = (std::filesystem::path(dir) / name).string();
      std::error_code ec;
      if (!std::filesystem::is_regular_file(path, ec))
        throw InputError(where, fmt::format("rank {}: field '{}': the file '{}' is missing", f.rank, key, path));
      return path;
    };
    f.graph = file("graph");
    f.trace = file("trace");
    f.comm_log = file("comm_log");
    f.record = file("record");
    if (r.contains("host_trace")) f.host_trace = file("host_trace");
    m.ranks.push_back(std::move(f));
  }
  return m;
}

RankRecord read_rank_record(const RankFiles& files) {
  const auto& path = files.record;
  const json j = parse(path, "rank record");
  if (!j.is_object()) throw InputError(path, "must be a JSON object");
  RankRecord r;
  r.rank = jf::get<int>(j, "rank", path);
  if (r.rank != files.rank)
    throw InputError(
        path, fmt::format("field 'rank' is {}, but the manifest lists the file for rank {}", r.rank, files.rank));
  r.ok = jf::get<bool>(j, "ok", path);
  if (!r.ok) {
    r.error = j.contains("error") && j["error"].is_string() ? j["error"].get<std::string>() : "no error recorded";
    throw InputError(path, fmt::format("rank {}: field 'ok': the program failed: {}", r.rank, r.error));
  }
  r.step_end_ns = jf::get<std::vector<std::int64_t>>(j, "step_end_ns", path);
  const auto steps = jf::get<std::vector<int>>(j, "window_steps", path);
  if (steps.size() != 2) throw InputError(path, "field 'window_steps' must be [A, B]");
  r.first_step = steps[0];
  r.last_step = steps[1];
  if (!j.contains("window") || !j["window"].is_array() || j["window"].size() != 2 ||
      !j["window"][0].is_number_integer() || !j["window"][1].is_number_integer())
    throw InputError(path, fmt::format("rank {}: field 'window': the rank did not record its window (it ran {} steps; "
                                       "the window needs {})",
                                       r.rank, r.step_end_ns.size(), r.last_step));
  if (r.step_end_ns.size() < static_cast<std::size_t>(r.last_step))
    throw InputError(path, fmt::format("rank {}: field 'step_end_ns': the rank ran {} steps; the window {}:{} needs {}",
                                       r.rank, r.step_end_ns.size(), r.first_step, r.last_step, r.last_step));
  r.window_start_ns = j["window"][0].get<std::int64_t>();
  r.window_end_ns = j["window"][1].get<std::int64_t>();
  if (r.window_end_ns < r.window_start_ns) throw InputError(path, "field 'window': it ends before it starts");
  if (!j.contains("groups") || !j["groups"].is_array()) throw InputError(path, "field 'groups' must be a list");
  for (const auto& g : j["groups"]) {
    if (!g.is_object()) throw InputError(path, "field 'groups': every group must be an object");
    Group group;
    if (g.contains("label") && g["label"].is_string()) group.label = g["label"].get<std::string>();
    group.ranks = jf::get<std::vector<int>>(g, "ranks", path + ": groups");
    r.groups.push_back(std::move(group));
  }
  if (j.contains("profiler_overhead") && !j["profiler_overhead"].is_null()) {
    const auto& o = j["profiler_overhead"];
    if (!o.is_object() || !o.contains("us_per_event") || !o["us_per_event"].is_number() ||
        !(o["us_per_event"].get<double>() >= 0))
      throw InputError(path,
                       fmt::format("rank {}: field 'profiler_overhead.us_per_event': must be a number >= 0", r.rank));
    r.overhead_us_per_event = o["us_per_event"].get<double>();
    if (o.contains("profiler_us_per_event")) {
      if (!o["profiler_us_per_event"].is_number() || !(o["profiler_us_per_event"].get<double>() >= 0))
        throw InputError(path, fmt::format("rank {}: field 'profiler_overhead.profiler_us_per_event': must be a "
                                           "number >= 0",
                                           r.rank));
      r.profiler_us_per_event = o["profiler_us_per_event"].get<double>();
    }
  }
  if (j.contains("host_window_steps")) {
    const auto host = jf::get<std::vector<int>>(j, "host_window_steps", path);
    if (host.size() != 2 || host[1] <= host[0])
      throw InputError(path, fmt::format("rank {}: field 'host_window_steps' must be [C, D] with C < D", r.rank));
    r.host_first_step = host[0];
    r.host_last_step = host[1];
  }
  return r;
}

}  // namespace chorus::workload::capture
