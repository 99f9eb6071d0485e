#include "rt_bench/comm_profile.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/plot_call.h"
#include "core/text_file.h"

namespace chorus::rt {
namespace {

using json = nlohmann::json;

// One file: the header, then one operation per line.
void read_file(const std::string& path, CommProfile& p, std::set<int>& ranks) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "cannot open the communication log");
  std::string line;
  int number = 0, rank = -1;
  while (std::getline(in, line)) {
    ++number;
    const std::string where = fmt::format("{}:{}", path, number);
    if (line.empty()) continue;
    json j;
    try {
      j = json::parse(line);
    } catch (const json::exception& e) {
      throw InputError(where, fmt::format("not a JSON line: {}", e.what()));
    }
    if (!j.is_object()) throw InputError(where, "not a JSON object");
    if (number == 1) {
      if (!j.contains("chorus_comm_log"))
        throw InputError(where, "not a chorus communication log (no 'chorus_comm_log' header)");
      rank = json_fields::get<int>(j, "rank", where);
      const int ws = json_fields::get<int>(j, "world_size", where);
      if (ws < 1 || rank < 0 || rank >= ws) throw InputError(where, fmt::format("rank {} of world size {}", rank, ws));
      if (p.world_size != 0 && ws != p.world_size)
        throw InputError(where, fmt::format("world size {} differs from the other logs' {}", ws, p.world_size));
      p.world_size = ws;
      if (!ranks.insert(rank).second) throw InputError(where, fmt::format("a second log of rank {}", rank));
      LogClock& clock = p.clocks[rank];
      if (j.contains("host")) clock.host = json_fields::get<std::string>(j, "host", where);
      clock.has_offset = j.contains("clock_to_rank0_ns");
      if (clock.has_offset) {
        clock.to_rank0_ns = json_fields::get<double>(j, "clock_to_rank0_ns", where);
        clock.error_ns = json_fields::get<double>(j, "clock_error_ns", where);
        if (!(clock.error_ns >= 0)) throw InputError(where, "clock_error_ns must be at least 0");
      }
      continue;
    }
    LoggedOp op;
    op.rank = rank;
    op.backend = json_fields::get<std::string>(j, "backend", where);
    op.op = json_fields::get<std::string>(j, "op", where);
    op.dtype = json_fields::get<std::string>(j, "dtype", where);
    op.bytes = json_fields::get<double>(j, "bytes", where);
    op.async_op = json_fields::get<bool>(j, "async", where);
    op.ok = json_fields::get<bool>(j, "ok", where);
    op.issue_ns = json_fields::get<double>(j, "issue_ns", where);
    op.start_ns = json_fields::get<double>(j, "start_ns", where);
    op.end_ns = json_fields::get<double>(j, "end_ns", where);
    if (!(op.issue_ns <= op.start_ns && op.start_ns <= op.end_ns))
      throw InputError(where, "times must satisfy issue_ns <= start_ns <= end_ns");
    if (!op.ok) ++p.failed;
    p.ops.push_back(std::move(op));
  }
  if (number == 0) throw InputError(path, "empty file (no header line)");
}

}  // namespace

std::vector<diagnose::CollectiveStart> collective_starts(const std::vector<LoggedOp>& ops) {
  std::map<std::pair<int, std::string>, std::vector<const LoggedOp*>> streams;
  for (const auto& o : ops)
    if (o.op != "send" && o.op != "recv") streams[{o.rank, o.backend}].push_back(&o);
  std::vector<diagnose::CollectiveStart> starts;
  for (auto& [key, stream] : streams) {
    std::stable_sort(stream.begin(), stream.end(),
                     [](const LoggedOp* a, const LoggedOp* b) { return a->start_ns < b->start_ns; });
    for (std::size_t i = 0; i < stream.size(); ++i)
      starts.push_back({key.second, stream[i]->op, static_cast<std::int64_t>(i), key.first,
                        static_cast<std::int64_t>(stream[i]->start_ns)});
  }
  return starts;
}

CommProfile read_comm_logs(const std::vector<std::string>& inputs) {
  if (inputs.empty()) throw InputError("LOG", "give the log files, or their prefix (CHORUS_RT_LOG's value)");
  CommProfile p;
  std::set<int> ranks;
  for (const auto& in : inputs) {
    if (std::filesystem::is_regular_file(in)) {
      p.files.push_back(in);
      read_file(in, p, ranks);
      continue;
    }
    const std::string first = in + ".0.jsonl";
    if (!std::filesystem::is_regular_file(first))
      throw InputError(in, fmt::format("neither a log file nor a prefix of one ({} does not exist)", first));
    p.files.push_back(first);
    read_file(first, p, ranks);
    for (int r = 1; r < p.world_size; ++r) {
      p.files.push_back(fmt::format("{}.{}.jsonl", in, r));
      read_file(p.files.back(), p, ranks);
    }
  }
  if (static_cast<int>(ranks.size()) != p.world_size)
    throw InputError(inputs.front(), fmt::format("logs of {} of the run's {} ranks", ranks.size(), p.world_size));
  std::map<std::pair<std::string, std::string>, ProfileRow> rows;
  double total = 0;
  for (const auto& o : p.ops) {
    auto& r = rows[{o.op, o.backend}];
    r.op = o.op;
    r.backend = o.backend;
    r.calls += 1;
    r.bytes += o.bytes;
    r.busy_ns += o.end_ns - o.start_ns;
    r.queued_ns += o.start_ns - o.issue_ns;
    total += o.end_ns - o.start_ns;
  }
  const double ws = p.world_size;
  for (auto& [key, r] : rows) {
    r.mean_call_ns = r.busy_ns / r.calls;
    r.share = total > 0 ? r.busy_ns / total : 0;
    r.calls /= ws;
    r.bytes /= ws;
    r.busy_ns /= ws;
    r.queued_ns /= ws;
    p.rows.push_back(r);
  }
  std::stable_sort(p.rows.begin(), p.rows.end(),
                   [](const ProfileRow& a, const ProfileRow& b) { return a.busy_ns > b.busy_ns; });
  // The logs' times are each host's CLOCK_MONOTONIC. Of one host they compare as they are; of
  // several, on rank 0's clock when every log has an offset: per host the offset of its rank
  // with the smallest error bound (the ranks of a host share its clock), none on rank 0's host.
  std::set<std::string> hosts;
  bool offsets = true;
  std::map<std::string, const LogClock*> best;  // per host
  for (const auto& [rank, c] : p.clocks) {
    hosts.insert(c.host);
    offsets = offsets && (c.has_offset || rank == 0);
    const LogClock*& b = best[c.host];
    if (rank == 0 || b == nullptr || (b != &p.clocks.at(0) && c.error_ns < b->error_ns)) b = &c;
  }
  p.aligned = hosts.size() > 1 && offsets;
  if (p.aligned) {
    const std::string& home = p.clocks.at(0).host;
    for (auto& o : p.ops) {
      const std::string& host = p.clocks.at(o.rank).host;
      const double shift = host == home ? 0 : best.at(host)->to_rank0_ns;
      o.issue_ns += shift;
      o.start_ns += shift;
      o.end_ns += shift;
    }
    for (const auto& [host, c] : best)
      if (host != home) p.clock_error_ns = std::max(p.clock_error_ns, c->error_ns);
  }
  p.stragglers = diagnose::find_stragglers(collective_starts(p.ops), hosts.size() > 1);
  p.stragglers.clock =
      p.aligned ? fmt::format("rank 0's clock ({} hosts; each log's offset estimated at init, error at most {:.1f} us)",
                              hosts.size(), p.clock_error_ns / 1e3)
      : hosts.size() > 1
          ? fmt::format("each host's own clock ({} hosts, logs without clock offsets: the times do not compare)",
                        hosts.size())
          : "CLOCK_MONOTONIC (one host)";
  return p;
}

std::string format_profile(const CommProfile& p) {
  std::string out = fmt::format("{} ranks, {} operations{} (per rank: means over the ranks)\n", p.world_size,
                                p.ops.size(), p.failed > 0 ? fmt::format(", {} failed", p.failed) : std::string());
  out += fmt::format("{:<18} {:<10} {:>9} {:>12} {:>12} {:>12} {:>12} {:>7}\n", "op", "backend", "calls", "MB",
                     "busy ms", "mean us", "queued ms", "share");
  for (const auto& r : p.rows)
    out += fmt::format("{:<18} {:<10} {:>9.0f} {:>12.3f} {:>12.3f} {:>12.2f} {:>12.3f} {:>6.1f}%\n", r.op, r.backend,
                       r.calls, r.bytes / 1e6, r.busy_ns / 1e6, r.mean_call_ns / 1e3, r.queued_ns / 1e6, 100 * r.share);
  out += diagnose::to_text(p.stragglers);
  return out;
}

json profile_json(const CommProfile& p) {
  json j{{"world_size", p.world_size},
         {"operations", p.ops.size()},
         {"failed", p.failed},
         {"files", p.files},
         {"stragglers", diagnose::to_json(p.stragglers)},
         {"clock", {{"aligned", p.aligned}, {"error_ns", p.clock_error_ns}}},
         {"rows", json::array()}};
  for (const auto& r : p.rows)
    j["rows"].push_back({{"op", r.op},
                         {"backend", r.backend},
                         {"calls_per_rank", r.calls},
                         {"bytes_per_rank", r.bytes},
                         {"busy_ns_per_rank", r.busy_ns},
                         {"queued_ns_per_rank", r.queued_ns},
                         {"mean_call_ns", r.mean_call_ns},
                         {"share", r.share}});
  return j;
}

json profile_trace(const CommProfile& p) {
  double t0 = 0;
  bool first = true;
  for (const auto& o : p.ops)
    if (first || o.issue_ns < t0) t0 = o.issue_ns, first = false;
  std::map<std::pair<int, std::string>, int> tids;
  json events = json::array();
  for (const auto& o : p.ops) {
    auto [it, fresh] = tids.try_emplace({o.rank, o.backend}, static_cast<int>(tids.size()));
    if (fresh)
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", o.rank},
                        {"tid", it->second},
                        {"args", {{"name", o.backend}}}});
    events.push_back({{"ph", "X"},
                      {"name", o.op},
                      {"cat", o.backend},
                      {"pid", o.rank},
                      {"tid", it->second},
                      {"ts", (o.start_ns - t0) / 1e3},
                      {"dur", (o.end_ns - o.start_ns) / 1e3},
                      {"args",
                       {{"bytes", o.bytes},
                        {"dtype", o.dtype},
                        {"async", o.async_op},
                        {"ok", o.ok},
                        {"queued_us", (o.start_ns - o.issue_ns) / 1e3}}}});
  }
  for (int r = 0; r < p.world_size; ++r)
    events.push_back(
        {{"ph", "M"}, {"name", "process_name"}, {"pid", r}, {"args", {{"name", fmt::format("rank {}", r)}}}});
  return {{"traceEvents", events}, {"displayTimeUnit", "ns"}};
}

std::vector<std::string> write_profile_outputs(const CommProfile& p, const std::string& dir) {
  OutputDir out(dir);
  std::string csv = "op,backend,calls_per_rank,bytes_per_rank,busy_ns_per_rank,queued_ns_per_rank,mean_call_ns,share\n";
  for (const auto& r : p.rows)
    csv += fmt::format("{},{},{:.3f},{:.1f},{:.1f},{:.1f},{:.1f},{:.6f}\n", r.op, r.backend, r.calls, r.bytes,
                       r.busy_ns, r.queued_ns, r.mean_call_ns, r.share);
  out.write("profile.csv", csv);
  for (auto& f : draw_figures("profile", dir)) out.written().push_back(std::move(f));
  return out.written();
}

}  // namespace chorus::rt
