#include "rt_bench/bench_report.h"

#include <algorithm>
#include <fmt/format.h>

namespace chorus::rt {

namespace {

// Calls f(row, timing, in_place) for every measured run: each row's out-of-place run, then its
// in-place run where there is one.
template <class F>
void for_each_run(const std::vector<BenchRow>& rows, F f) {
  for (const auto& r : rows) {
    f(r, r.out_of_place, false);
    if (r.in_place) f(r, *r.in_place, true);
  }
}

// Column widths after backend (whose width depends on the rows).
constexpr int kColOp = 13, kColSize = 12, kColCount = 12, kColType = 6, kColRedop = 6, kColRoot = 5;
constexpr int kColTime = 10, kColBw = 9, kColWrong = 7;

// The cells of one placement: time, algbw, busbw and, when checked, #wrong.
std::string group_cells(const std::string& time, const std::string& algbw, const std::string& busbw,
                        const std::string& wrong, bool check) {
  std::string s = fmt::format(" {:>{}} {:>{}} {:>{}}", time, kColTime, algbw, kColBw, busbw, kColBw);
  if (check) s += fmt::format(" {:>{}}", wrong, kColWrong);
  return s;
}

std::string group_cells(const BenchTiming* t, bool check) {
  if (t == nullptr) return group_cells("-", "-", "-", "-", check);
  return group_cells(fmt::format("{:.2f}", t->mean_us), fmt::format("{:.3f}", t->algbw_GBps),
                     fmt::format("{:.3f}", t->busbw_GBps), std::to_string(t->wrong), check);
}

// A line of the table ("# " for the header, "  " for the rows), without trailing blanks.
std::string table_line(const char* start, int width, const std::vector<std::string>& cells, const std::string& groups) {
  std::string s = fmt::format("{}{:<{}} {:<{}} {:>{}} {:>{}} {:>{}} {:>{}} {:>{}}{}", start, cells[0], width, cells[1],
                              kColOp, cells[2], kColSize, cells[3], kColCount, cells[4], kColType, cells[5], kColRedop,
                              cells[6], kColRoot, groups);
  s.erase(s.find_last_not_of(' ') + 1);
  return s + "\n";
}

nlohmann::json timing_json(const BenchTiming& t, bool check) {
  nlohmann::json j;
  j["min_us"] = t.min_us;
  j["mean_us"] = t.mean_us;
  j["max_us"] = t.max_us;
  j["algbw_GBps"] = t.algbw_GBps;
  j["busbw_GBps"] = t.busbw_GBps;
  if (check) {
    j["wrong"] = t.wrong;
    j["check"] = t.check;
  }
  return j;
}

}  // namespace

namespace {

int backend_width(const std::vector<std::string>& backends) {
  int width = 7;  // "backend", or the longest "backend:algorithm"
  for (const auto& b : backends) width = std::max(width, static_cast<int>(b.size()));
  return width;
}

}  // namespace

std::string bench_table_header(int world_size, int iters, int warmup, const std::vector<std::string>& backends,
                               bool check) {
  const int width = backend_width(backends);
  std::string out = fmt::format(
      "# {} ranks; {} iterations after {} warm-ups; time: mean over the iterations of the slowest "
      "rank's time; GB/s = 10^9 B/s\n#\n",
      world_size, iters, warmup);
  const std::string names = group_cells("time", "algbw", "busbw", "#wrong", check);
  const std::string units = group_cells("(us)", "(GB/s)", "(GB/s)", "", check);
  const auto group = static_cast<int>(names.size());
  out += table_line("# ", width, {"", "", "", "", "", "", ""},
                    fmt::format("{:^{}}{:^{}}", "out-of-place", group, "in-place", group));
  out += table_line("# ", width, {"backend", "op", "size", "count", "type", "redop", "root"}, names + names);
  out += table_line("# ", width, {"", "", "(B)", "(elements)", "", "", ""}, units + units);
  return out;
}

std::string bench_table_row(const BenchRow& r, const std::vector<std::string>& backends, bool check) {
  return table_line("  ", backend_width(backends),
                    {r.backend, bench_op_name(r.op), std::to_string(r.bytes), std::to_string(r.count),
                     std::string(to_string(r.dtype)), r.redop ? std::string(to_string(*r.redop)) : "-",
                     r.root >= 0 ? std::to_string(r.root) : "-"},
                    group_cells(&r.out_of_place, check) + group_cells(r.in_place ? &*r.in_place : nullptr, check));
}

std::string bench_table(const std::vector<BenchRow>& rows, bool check) {
  if (rows.empty()) return {};
  std::vector<std::string> backends;
  for (const auto& r : rows) backends.push_back(r.backend);
  std::string out =
      bench_table_header(rows.front().world_size, rows.front().iters, rows.front().warmup, backends, check);
  for (const auto& r : rows) out += bench_table_row(r, backends, check);
  return out;
}

std::string bench_summary(const std::vector<BenchRow>& rows, bool check) {
  std::string out;
  if (check) {
    const std::int64_t wrong = total_wrong(rows);
    out += fmt::format("# Out of bounds values : {} {}\n", wrong, wrong == 0 ? "OK" : "FAILED");
  }
  for (const auto& a : average_busbw_by_backend_op(rows))
    out += fmt::format("# Avg bus bandwidth    : {:.3f}  ({} {})\n", a.busbw_GBps, a.backend, bench_op_name(a.op));
  return out;
}

nlohmann::json bench_row_json(const BenchRow& r, bool check) {
  nlohmann::json j;
  j["backend"] = r.backend;
  j["op"] = bench_op_name(r.op);
  j["bytes"] = r.bytes;
  j["count"] = r.count;
  j["dtype"] = to_string(r.dtype);
  j["redop"] = r.redop ? nlohmann::json(to_string(*r.redop)) : nlohmann::json();
  j["root"] = r.root >= 0 ? nlohmann::json(r.root) : nlohmann::json();
  j["world_size"] = r.world_size;
  j["iters"] = r.iters;
  j["warmup"] = r.warmup;
  j.update(timing_json(r.out_of_place, check));  // out of place: the keys of the row itself
  j["in_place"] = r.in_place ? timing_json(*r.in_place, check) : nlohmann::json();
  return j;
}

nlohmann::json bench_json(const std::vector<BenchRow>& rows, bool check) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) out.push_back(bench_row_json(r, check));
  return out;
}

double average_busbw(const std::vector<BenchRow>& rows) {
  double sum = 0;
  int runs = 0;
  for_each_run(rows, [&](const BenchRow&, const BenchTiming& t, bool) {
    sum += t.busbw_GBps;
    ++runs;
  });
  return runs == 0 ? 0 : sum / runs;
}

std::vector<BusbwAverage> average_busbw_by_backend_op(const std::vector<BenchRow>& rows) {
  std::vector<BusbwAverage> out;
  std::vector<std::vector<BenchRow>> groups;
  for (const auto& r : rows) {
    std::size_t g = 0;
    while (g < out.size() && !(out[g].backend == r.backend && out[g].op == r.op)) ++g;
    if (g == out.size()) {
      out.push_back({r.backend, r.op, 0});
      groups.emplace_back();
    }
    groups[g].push_back(r);
  }
  for (std::size_t g = 0; g < out.size(); ++g) out[g].busbw_GBps = average_busbw(groups[g]);
  return out;
}

std::int64_t total_wrong(const std::vector<BenchRow>& rows) {
  std::int64_t wrong = 0;
  for_each_run(rows, [&](const BenchRow&, const BenchTiming& t, bool) { wrong += t.wrong; });
  return wrong;
}

std::vector<std::string> bench_failures(const std::vector<BenchRow>& rows) {
  std::vector<std::string> failures;
  for_each_run(rows, [&](const BenchRow& r, const BenchTiming& t, bool in_place) {
    if (!t.check.empty() && t.check != "ok")
      failures.push_back(fmt::format("{} {} {} B {}: {} wrong element(s); {}", r.backend, bench_op_name(r.op), r.bytes,
                                     in_place ? "in place" : "out of place", t.wrong, t.check));
  });
  return failures;
}

}  // namespace chorus::rt
