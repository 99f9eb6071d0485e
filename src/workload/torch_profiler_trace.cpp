#include "workload/torch_profiler_trace.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace chorus::workload {
namespace {

using nlohmann::json;

// How far a child event's end may pass its parent's in a trace of whole microseconds.
constexpr double kOverhangUs = 1.0;

// The part of an event's pid or tid that names its thread.
std::string id_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Frames that are not operators and enclose them: a Kineto step annotation, a Python frame. They
// are skipped.
bool transparent(const ProfiledEvent& e, const std::string& category) {
  return category == "python_function" || e.name.rfind("ProfilerStep#", 0) == 0;
}

// The length of [from, to] that no interval of `covering` (sorted by start) covers.
double uncovered(double from, double to, const std::vector<std::pair<double, double>>& covering) {
  double free = 0, at = from;
  for (const auto& [a, b] : covering) {
    if (b <= at) continue;
    if (a >= to) break;
    if (a > at) free += a - at;
    at = std::max(at, b);
    if (at >= to) break;
  }
  if (to > at) free += to - at;
  return free;
}

// The time inside `e` while a backend record that starts and ends inside it is in flight and
// none of `children` (its direct child events, by start) runs: its thread waited for a collective.
double waited_inside(const ProfiledEvent& e, const std::vector<std::pair<double, double>>& children,
                     const std::vector<std::pair<double, double>>& in_flight) {
  const double end = e.ts_us + e.dur_us;
  std::vector<std::pair<double, double>> inside;  // the contained records, merged
  // in_flight is sorted by start: from the first record starting in `e` to the last.
  const auto first = std::lower_bound(in_flight.begin(), in_flight.end(), std::make_pair(e.ts_us, -1e300));
  for (auto it = first; it != in_flight.end() && it->first <= end; ++it) {
    const auto [a, b] = *it;
    if (b > end) continue;
    if (!inside.empty() && a <= inside.back().second)
      inside.back().second = std::max(inside.back().second, b);
    else
      inside.emplace_back(a, b);
  }
  double waited = 0;
  for (const auto& [a, b] : inside) waited += uncovered(a, b, children);
  return waited;
}

}  // namespace

bool is_c10d_call(const std::string& name) { return name.rfind("c10d::", 0) == 0; }

bool is_backend_record(const std::string& name) {
  static const std::set<std::string> backends = {"gloo", "nccl", "mpi", "ucc", "chorus"};
  const auto colon = name.find(':');
  return colon != std::string::npos && name.find("::") == std::string::npos &&
         backends.count(name.substr(0, colon)) > 0;
}

std::size_t median_over_steps(ProfilerTrace& trace, const std::string& step_end, std::size_t keep) {
  // Per step, the k-th event of each name (the name's count within the step, from 0).
  std::vector<std::map<std::pair<std::string, int>, std::size_t>> steps(1);
  std::map<std::string, int> seen;
  for (std::size_t k = 0; k < trace.top_level.size(); ++k) {
    const auto& name = trace.top_level[k].name;
    steps.back()[{name, seen[name]++}] = k;
    if (name.rfind(step_end, 0) == 0) {
      steps.emplace_back();
      seen.clear();
    }
  }
  if (!steps.back().empty()) return 0;  // events after the last step's end
  steps.pop_back();
  if (steps.size() < 2) return 0;
  // Each step's time on the host: its events' durations and the host time and waits after them.
  std::vector<std::pair<double, std::size_t>> totals;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    double total = 0;
    for (const auto& [key, k] : steps[s])
      total += trace.top_level[k].dur_us + trace.top_level[k].gap_after_us + trace.top_level[k].wait_after_us;
    totals.emplace_back(total, s);
  }
  std::sort(totals.begin(), totals.end());
  const std::size_t median_step = totals[(totals.size() - 1) / 2].second;  // the lower middle of an even count
  const std::size_t last = trace.top_level.size() - 1;  // no next event: its host time is not measured
  for (const auto& [key, first] : steps[0]) {
    std::vector<std::size_t> same;
    for (const auto& step : steps)
      if (auto it = step.find(key); it != step.end()) same.push_back(it->second);
    if (same.size() != steps.size()) continue;  // not in every step: its own times
    auto from = trace.top_level[same[median_step]];
    if (same[median_step] == last) {  // the step before's host time and wait instead
      from.gap_after_us = trace.top_level[same[median_step - 1]].gap_after_us;
      from.wait_after_us = trace.top_level[same[median_step - 1]].wait_after_us;
    }
    for (auto k : same) {
      auto& e = trace.top_level[k];
      e.dur_us = from.dur_us;
      e.collective_us = from.collective_us;
      e.gap_after_us = from.gap_after_us;
      e.wait_after_us = from.wait_after_us;
      e.wait_inside_us = from.wait_inside_us;
    }
  }
  if (keep > 0 && keep < steps.size()) {
    std::size_t from = trace.top_level.size();  // the first event of step `keep`
    for (const auto& [key, k] : steps[keep]) from = std::min(from, k);
    trace.top_level.erase(trace.top_level.begin() + static_cast<std::ptrdiff_t>(from), trace.top_level.end());
  }
  return steps.size();
}

ProfilerTrace read_profiler_trace(const std::string& text, const std::string& source) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(source, fmt::format("not JSON (a truncated profiler trace?): {}", e.what()));
  }
  const json* events = &root;
  if (root.is_object()) {
    if (!root.contains("traceEvents") || !root["traceEvents"].is_array())
      throw InputError(source,
                       "field traceEvents: missing; a torch profiler trace is a list of events or an object "
                       "with a 'traceEvents' list");
    events = &root["traceEvents"];
  } else if (!root.is_array()) {
    throw InputError(source, "a torch profiler trace is a list of events or an object with a 'traceEvents' list");
  }
  std::map<std::string, std::vector<ProfiledEvent>> threads;
  ProfilerTrace trace;
  for (std::size_t i = 0; i < events->size(); ++i) {
    const auto& j = (*events)[i];
    const auto at = fmt::format("{}: event {}", source, i);
    if (!j.is_object()) throw InputError(at, "every event must be an object");
    if (!j.contains("ph") || !j["ph"].is_string() || j["ph"].get<std::string>() != "X") continue;
    auto field = [&](const char* key) -> const json& {
      if (!j.contains(key)) throw InputError(at, fmt::format("field {}: missing", key));
      return j[key];
    };
    ProfiledEvent e;
    e.index = i;
    if (!field("name").is_string())
      throw InputError(at, fmt::format("field name: must be a string, got {}", j["name"].dump()));
    e.name = j["name"].get<std::string>();
    for (const auto* key : {"ts", "dur"})
      if (!field(key).is_number() || !std::isfinite(j[key].get<double>()) || j[key].get<double>() < 0)
        throw InputError(at, fmt::format("field {}: must be a number >= 0 (microseconds), got {}", key, j[key].dump()));
    e.ts_us = j["ts"].get<double>();
    e.dur_us = j["dur"].get<double>();
    const auto& tid = field("tid");
    if (!tid.is_string() && !tid.is_number_integer())
      throw InputError(at, fmt::format("field tid: must be an integer or a string, got {}", tid.dump()));
    std::string pid = "-";
    if (j.contains("pid")) {
      if (j["pid"].is_number_integer()) e.pid = j["pid"].get<std::int64_t>();
      if (!j["pid"].is_string() && !j["pid"].is_number_integer())
        throw InputError(at, fmt::format("field pid: must be an integer or a string, got {}", j["pid"].dump()));
      pid = id_text(j["pid"]);
    }
    e.thread = pid + "/" + id_text(tid);
    std::string category;
    if (j.contains("cat") && j["cat"].is_string()) category = j["cat"].get<std::string>();
    if (j.contains("args")) {
      const auto& args = j["args"];
      if (!args.is_object()) throw InputError(at, fmt::format("field args: must be an object, got {}", args.dump()));
      if (args.contains("Record function id")) {
        const auto& id = args["Record function id"];
        if (!id.is_number_integer() || id.get<std::int64_t>() < 0)
          throw InputError(at,
                           fmt::format("field args.Record function id: must be an integer >= 0, got {}", id.dump()));
        e.record_function_id = id.get<std::int64_t>();
      }
    }
    ++trace.complete_events;
    if (is_backend_record(e.name))
      trace.backend_records.push_back(std::move(e));
    else if (!transparent(e, category))
      threads[e.thread].push_back(std::move(e));
  }
  if (trace.complete_events == 0)
    throw InputError(source, "field ph: no complete event (\"ph\": \"X\"); not a torch profiler trace of operators");
  std::vector<std::pair<double, double>> in_flight;  // the backend records' spans, by start
  for (const auto& e : trace.backend_records) in_flight.emplace_back(e.ts_us, e.ts_us + e.dur_us);
  std::sort(in_flight.begin(), in_flight.end());
  for (auto& [thread, list] : threads) {
    const std::size_t thread_first = trace.top_level.size();
    std::stable_sort(list.begin(), list.end(), [](const ProfiledEvent& a, const ProfiledEvent& b) {
      if (a.ts_us != b.ts_us) return a.ts_us < b.ts_us;
      return a.dur_us > b.dur_us;  // the enclosing one first
    });
    // Open events: their end, whether they are or are inside a c10d:: call, and the top-level
    // event they belong to.
    struct Open {
      double end;
      bool in_collective;
      std::size_t top;
    };
    std::vector<Open> open;
    std::map<std::size_t, std::vector<std::pair<double, double>>> children;  // top-level -> its direct children
    for (auto& e : list) {
      const double end = e.ts_us + e.dur_us;
      // Inside the open event, or starting inside it and ending at most kOverhangUs after it: a
      // child in the legacy profiler's whole microseconds (start and duration each rounded down)
      // may end one microsecond after its parent, while a sibling never starts before the
      // previous event's end.
      while (!open.empty() && end > open.back().end &&
             !(e.ts_us < open.back().end && end <= open.back().end + kOverhangUs))
        open.pop_back();
      const bool collective = is_c10d_call(e.name);
      if (open.empty()) {
        if (collective) e.collective_us = e.dur_us;
        trace.top_level.push_back(e);
        open.push_back({end, collective, trace.top_level.size() - 1});
        continue;
      }
      if (collective && !open.back().in_collective) trace.top_level[open.back().top].collective_us += e.dur_us;
      ++trace.top_level[open.back().top].events;
      if (open.size() == 1) children[open.back().top].emplace_back(e.ts_us, end);
      open.push_back({std::min(end, open.back().end), collective || open.back().in_collective, open.back().top});
    }
    for (std::size_t k = thread_first; k < trace.top_level.size(); ++k)
      if (!is_c10d_call(trace.top_level[k].name))
        trace.top_level[k].wait_inside_us = waited_inside(trace.top_level[k], children[k], in_flight);
    for (std::size_t k = thread_first; k + 1 < trace.top_level.size(); ++k) {
      auto& e = trace.top_level[k];
      const double end = e.ts_us + e.dur_us, next = trace.top_level[k + 1].ts_us;
      if (next <= end) continue;
      e.gap_after_us = uncovered(end, next, in_flight);
      e.wait_after_us = (next - end) - e.gap_after_us;
    }
  }
  std::stable_sort(trace.top_level.begin(), trace.top_level.end(), [](const ProfiledEvent& a, const ProfiledEvent& b) {
    return a.ts_us != b.ts_us ? a.ts_us < b.ts_us : a.index < b.index;
  });
  return trace;
}

}  // namespace chorus::workload
