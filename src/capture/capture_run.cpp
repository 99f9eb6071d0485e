// `chorus capture`: the ranks' environment and command, the job, the manifest written last.
#include "capture/capture_run.h"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "capture/step_times.h"
#include "core/error.h"
#include "core/text_file.h"
#include "launch/launcher.h"
#include "workload/capture/capture_manifest.h"

#ifndef CHORUS_CAPTURE_PYTHONPATH
#error "CHORUS_CAPTURE_PYTHONPATH (the build's python directory) is set by src/capture/CMakeLists.txt"
#endif

namespace chorus::capture {

namespace fs = std::filesystem;
using workload::capture::RankFiles;

void parse_steps(const std::string& text, const std::string& where, int& first, int& last) {
  const auto colon = text.find(':');
  int a = 0, b = 0;
  std::size_t used_a = 0, used_b = 0;
  try {
    if (colon != std::string::npos) {
      a = std::stoi(text.substr(0, colon), &used_a);
      b = std::stoi(text.substr(colon + 1), &used_b);
    }
  } catch (const std::exception&) {
    used_a = 0;
  }
  if (colon == std::string::npos || used_a != colon || used_b != text.size() - colon - 1 || a < 1 || b <= a)
    throw InputError(where, fmt::format("expected A:B, the steps A .. B-1 (from 0) with 1 <= A < B (step 0 is the "
                                        "warm-up), got '{}'",
                                        text));
  first = a;
  last = b;
}

namespace {

// python3 [options] SCRIPT ARGS -> python3 [options] -m chorus.capture SCRIPT ARGS (and -m MODULE alike).
std::vector<std::string> rank_command(const std::vector<std::string>& command) {
  if (command.empty()) throw InputError("command", "missing: give the program after --, e.g. -- python3 train.py");
  const auto interpreter = fs::path(command[0]).filename().string();
  if (interpreter.rfind("python", 0) != 0)
    throw InputError("command", fmt::format("'{}' is no Python interpreter: chorus capture runs torch programs, "
                                            "-- python3 train.py ARGS",
                                            command[0]));
  std::vector<std::string> out = {command[0]};
  std::size_t k = 1;
  for (; k < command.size() && command[k].size() > 1 && command[k][0] == '-' && command[k] != "-m"; ++k)
    out.push_back(command[k]);  // the interpreter's own options (-u, -X ...: single words only)
  if (k == command.size()) throw InputError("command", "no script after the interpreter: -- python3 train.py ARGS");
  out.insert(out.end(), {"-m", "chorus.capture"});
  out.insert(out.end(), command.begin() + static_cast<std::ptrdiff_t>(k), command.end());
  return out;
}

void set_rank_environment(const CaptureOptions& o, const std::string& dir) {
  const auto set = [](const char* key, const std::string& value) { ::setenv(key, value.c_str(), 1); };
  set("CHORUS_CAPTURE_DIR", dir);
  set("CHORUS_CAPTURE_STEPS", fmt::format("{}:{}", o.first_step, o.last_step));
  set("CHORUS_RT_LOG", (fs::path(dir) / "comm").string());
  set("CHORUS_BACKENDS", o.backend);
  set("CHORUS_BACKEND_MAP", "*:" + o.backend);
  const char* old = std::getenv("PYTHONPATH");
  set("PYTHONPATH", std::string(CHORUS_CAPTURE_PYTHONPATH) + (old && *old ? std::string(":") + old : ""));
}

RankFiles files_of(const std::string& dir, int rank) {
  auto at = [&](const std::string& name) { return (fs::path(dir) / fmt::format(fmt::runtime(name), rank)).string(); };
  return {rank, at("graph.{}.json"), at("trace.{}.json"), at("comm.{}.jsonl"), at("rank.{}.json"), ""};
}

// Why the capture is not complete ("" if it is), naming the rank and the file; the records read.
std::string check_ranks(const CaptureOptions& o, const std::string& dir, int status,
                        std::vector<workload::capture::RankRecord>& records) {
  std::string why;
  for (int r = 0; r < o.ranks; ++r) {
    const auto f = files_of(dir, r);
    if (!fs::is_regular_file(f.record)) {
      if (why.empty()) why = fmt::format("rank {}: {} is missing (the rank did not reach its end)", r, f.record);
      continue;
    }
    try {
      records.push_back(workload::capture::read_rank_record(f));
    } catch (const InputError& e) {
      if (why.empty()) why = e.what();
      continue;
    }
    for (const auto& file : {f.graph, f.trace, f.comm_log})
      if (!fs::is_regular_file(file) && why.empty()) why = fmt::format("rank {}: {} is missing", r, file);
  }
  if (why.empty() && status != 0) why = fmt::format("the job ended with status {}", status);
  return why;
}

void write_manifest(const CaptureOptions& o, const std::string& dir, const CaptureResult& r,
                    const std::vector<workload::capture::RankRecord>& records, const std::string& torch_version) {
  nlohmann::json ranks = nlohmann::json::array();
  for (int k = 0; k < o.ranks; ++k) {
    auto rel = [&](const std::string& name) { return fmt::format(fmt::runtime(name), k); };
    ranks.push_back({{"rank", k},
                     {"graph", rel("graph.{}.json")},
                     {"trace", rel("trace.{}.json")},
                     {"comm_log", rel("comm.{}.jsonl")},
                     {"record", rel("rank.{}.json")}});
    if (fs::is_regular_file(fs::path(dir) / rel("trace_host.{}.json")))
      ranks.back()["host_trace"] = rel("trace_host.{}.json");
  }
  nlohmann::json m = {
      {"chorus_capture", 1},
      {"complete", r.complete},
      {"chorus_version", o.chorus_version},
      {"torch_version", torch_version},
      {"world", o.ranks},
      {"backend", o.backend},
      {"command", o.command},
      {"steps", {{"window", {o.first_step, o.last_step}}, {"ran", r.steps.steps_ran}}},
      {"step_ms", {{"inside", r.steps.inside_ms}, {"outside", r.steps.outside_ms}, {"after_window", r.steps.write_ms}}},
      {"ranks", ranks}};
  if (!r.complete) m["error"] = r.error;
  m["ranks_recorded"] = records.size();
  write_text_file((fs::path(dir) / "manifest.json").string(), m.dump(1) + "\n");
}

}  // namespace

CaptureResult run_capture(const CaptureOptions& o) {
  if (o.backend != "shm" && o.backend != "gloo")
    throw InputError("backend", fmt::format("'{}': chorus capture runs on shm or gloo", o.backend));
  if (o.ranks < 1) throw InputError("ranks", fmt::format("must be >= 1, got {}", o.ranks));
  if (o.first_step < 1 || o.last_step <= o.first_step)
    throw InputError("steps", fmt::format("{}:{}: expected 1 <= A < B", o.first_step, o.last_step));
  launch::LaunchOptions l;
  l.ranks = o.ranks;
  l.command = rank_command(o.command);
  l.kill_grace_s = o.kill_grace_s;
  l.capture_stdout = o.quiet;
  l.oversubscription_noted = o.quiet;
  std::error_code ec;
  fs::create_directories(o.out, ec);
  if (ec) throw InputError("out", fmt::format("cannot create '{}': {}", o.out, ec.message()));
  const std::string dir = fs::absolute(o.out).string();
  fs::remove(fs::path(dir) / "manifest.json", ec);  // a previous capture's: never left beside new files
  for (int r = 0; r < o.ranks; ++r) {
    fs::remove(files_of(dir, r).record, ec);
    fs::remove(fs::path(dir) / fmt::format("trace_host.{}.json", r), ec);
  }
  set_rank_environment(o, dir);
  CaptureResult result;
  result.status = launch::run_job(l).status;
  std::vector<workload::capture::RankRecord> records;
  result.error = check_ranks(o, dir, result.status, records);
  std::vector<std::vector<std::int64_t>> ends;
  for (const auto& rec : records) ends.push_back(rec.step_end_ns);
  result.steps = step_times(ends, o.first_step, o.last_step);
  result.complete = result.error.empty();
  std::string torch_version;
  if (fs::is_regular_file(files_of(dir, 0).record)) {
    const auto j = nlohmann::json::parse(read_text_file(files_of(dir, 0).record, "the rank record"), nullptr, false);
    if (j.is_object() && j.contains("torch_version") && j["torch_version"].is_string())
      torch_version = j["torch_version"].get<std::string>();
  }
  result.manifest = (fs::path(dir) / "manifest.json").string();
  write_manifest(o, dir, result, records, torch_version);
  return result;
}

}  // namespace chorus::capture
