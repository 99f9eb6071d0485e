#include "rt/tuning_table.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "rt/call.h"
#include "core/text_file.h"

namespace chorus::rt {

using nlohmann::json;

std::string TuningRow::best() const {
  std::string name;
  double t = std::numeric_limits<double>::infinity();
  for (const auto& [b, us] : time_us)
    if (us < t) t = us, name = b;
  return name;
}

namespace {
void require_keys(const json& j, const std::vector<std::string>& allowed, const std::string& where) {
  if (!j.is_object()) throw InputError(where, "expected an object");
  for (const auto& [key, value] : j.items())
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      throw InputError(where, "unknown key '" + key + "'");
}

// "mpi:ring" -> "mpi".
std::string_view candidate_backend(std::string_view candidate) { return candidate.substr(0, candidate.find(':')); }

// A time_us key: a backend (shm, mpi, gloo), for the operations that take algorithms optionally
// with one ("mpi:ring"; whether the backend has it is checked when auto picks it).
void check_candidate(const std::string& key, CollectiveKind op, const std::string& where) {
  const std::string_view backend = candidate_backend(key);
  if (backend != "shm" && backend != "mpi" && backend != "gloo")
    throw InputError(where, "'" + key +
                                "': expected a backend (shm, mpi, gloo), optionally followed by :algorithm for " +
                                std::string(kAlgorithmOps));
  if (backend.size() == key.size()) return;
  const std::string_view algorithm = std::string_view(key).substr(backend.size() + 1);
  if (!takes_algorithm(op))
    throw InputError(where, "'" + key + "': only the rows of " + std::string(kAlgorithmOps) + " name algorithms");
  if (algorithm.empty() || !std::all_of(algorithm.begin(), algorithm.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
      }))
    throw InputError(where, "'" + key + "': an algorithm name is lower-case letters, digits and _");
}
}  // namespace

TuningTable TuningTable::load(const std::string& path) { return parse(read_text_file(path, "the tuning table"), path); }

TuningTable TuningTable::parse(const std::string& text, const std::string& path) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(path, std::string("not valid JSON: ") + e.what());
  }
  require_keys(j, {"schema", "machine", "tables"}, path);
  if (!j.contains("schema") || !j["schema"].is_string() || j["schema"].get<std::string>() != kSchema)
    throw InputError(path + ": schema", std::string("expected \"") + kSchema + "\"");
  TuningTable t;
  if (j.contains("machine")) {
    if (!j["machine"].is_string()) throw InputError(path + ": machine", "expected a string");
    t.machine = j["machine"].get<std::string>();
  }
  if (!j.contains("tables") || !j["tables"].is_array()) throw InputError(path + ": tables", "expected an array");
  std::size_t i = 0;
  for (const auto& tab : j["tables"]) {
    const std::string where = path + ": tables[" + std::to_string(i++) + "]";
    require_keys(tab, {"op", "world_size", "rows"}, where);
    try {
      const CollectiveKind op = parse_op_kind(tab.at("op").get<std::string>(), where + ".op");
      const json& ws = tab.at("world_size");
      // Checked before converting: nlohmann casts any number, 1e30 or 2.5, to an int.
      if (!ws.is_number_integer() || ws.get<std::int64_t>() < 1 || ws.get<std::int64_t>() > (1 << 20))
        throw InputError(where + ".world_size", "expected an integer in [1, 1048576], got " + ws.dump());
      const int world = ws.get<int>();
      if (!tab.at("rows").is_array()) throw InputError(where + ".rows", "expected an array");
      auto& rows = t.tables[{op, world}];
      for (const auto& r : tab.at("rows")) {
        require_keys(r, {"bytes", "best", "time_us"}, where + ".rows");
        TuningRow row;
        const json& bytes = r.at("bytes");
        if (!bytes.is_number_unsigned() && !(bytes.is_number_integer() && bytes.get<std::int64_t>() >= 0))
          throw InputError(where + ".rows.bytes", "expected a non-negative integer, got " + bytes.dump());
        row.bytes = bytes.get<std::uint64_t>();
        if (!r.at("time_us").is_object()) throw InputError(where + ".rows.time_us", "expected an object");
        for (const auto& [b, us] : r.at("time_us").items()) {
          const double us_value = us.get<double>();
          if (b.empty() || !std::isfinite(us_value) || us_value < 0)
            throw InputError(where + ".rows.time_us",
                             "expected backend names with finite, non-negative times in microseconds");
          check_candidate(b, op, where + ".rows.time_us");
          row.time_us[b] = us_value;
        }
        if (row.time_us.empty()) throw InputError(where + ".rows", "time_us is empty");
        rows.push_back(row);
      }
      std::sort(rows.begin(), rows.end(), [](const TuningRow& a, const TuningRow& b) { return a.bytes < b.bytes; });
    } catch (const json::exception& e) {
      throw InputError(where, std::string("bad field: ") + e.what());
    }
  }
  return t;
}

std::string TuningTable::to_json() const {
  json j;
  j["schema"] = kSchema;
  j["machine"] = machine;
  j["tables"] = json::array();
  for (const auto& [key, rows] : tables) {
    json tab;
    tab["op"] = std::string(to_string(key.first));
    tab["world_size"] = key.second;
    tab["rows"] = json::array();
    for (const auto& r : rows) {
      json jr;
      jr["bytes"] = r.bytes;
      jr["best"] = r.best();
      jr["time_us"] = r.time_us;
      tab["rows"].push_back(jr);
    }
    j["tables"].push_back(tab);
  }
  return j.dump(2) + "\n";
}

void TuningTable::save(const std::string& path) const { write_text_file(path, to_json()); }

std::optional<std::string> TuningTable::pick(CollectiveKind op, int world_size, std::uint64_t bytes,
                                             const std::vector<std::string>& allowed) const {
  auto it = tables.find({op, world_size});
  if (it == tables.end() || it->second.empty()) return std::nullopt;
  const auto& rows = it->second;
  const TuningRow* row = &rows.front();
  for (const auto& r : rows)
    if (r.bytes <= bytes) row = &r;
  std::optional<std::string> best;
  double t = std::numeric_limits<double>::infinity();
  for (const auto& [b, us] : row->time_us)
    if (std::find(allowed.begin(), allowed.end(), candidate_backend(b)) != allowed.end() && us < t) t = us, best = b;
  return best;
}

std::optional<double> TuningTable::estimate_us(CollectiveKind op, int world_size, double bytes,
                                               const std::string& backend) const {
  auto it = tables.find({op, world_size});
  if (it == tables.end()) return std::nullopt;
  const TuningRow* below = nullptr;   // the largest row <= bytes that measured `backend`
  const TuningRow* above = nullptr;   // the smallest row > bytes that did
  for (const auto& r : it->second) {  // sorted by bytes
    if (r.time_us.count(backend) == 0) continue;
    if (static_cast<double>(r.bytes) <= bytes)
      below = &r;
    else if (above == nullptr)
      above = &r;
  }
  if (below == nullptr && above == nullptr) return std::nullopt;
  if (below == nullptr) return above->time_us.at(backend);
  const double t0 = below->time_us.at(backend), b0 = static_cast<double>(below->bytes);
  if (above == nullptr) return b0 > 0 ? t0 * bytes / b0 : t0;
  const double t1 = above->time_us.at(backend), b1 = static_cast<double>(above->bytes);
  return t0 + (t1 - t0) * (bytes - b0) / (b1 - b0);
}

}  // namespace chorus::rt
