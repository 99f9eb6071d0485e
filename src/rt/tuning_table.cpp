#include "rt/tuning_table.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.h"

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
}  // namespace

TuningTable TuningTable::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "cannot open tuning table");
  json j;
  try {
    in >> j;
  } catch (const json::exception& e) {
    throw InputError(path, std::string("not valid JSON: ") + e.what());
  }
  require_keys(j, {"schema", "machine", "tables"}, path);
  if (j.value("schema", "") != kSchema)
    throw InputError(path + ": schema", std::string("expected \"") + kSchema + "\"");
  TuningTable t;
  t.machine = j.value("machine", "");
  if (!j.contains("tables") || !j["tables"].is_array())
    throw InputError(path + ": tables", "expected an array");
  std::size_t i = 0;
  for (const auto& tab : j["tables"]) {
    const std::string where = path + ": tables[" + std::to_string(i++) + "]";
    require_keys(tab, {"op", "world_size", "rows"}, where);
    try {
      const OpKind op = parse_op_kind(tab.at("op").get<std::string>(), where + ".op");
      const int world = tab.at("world_size").get<int>();
      if (world < 1) throw InputError(where + ".world_size", "must be >= 1");
      auto& rows = t.tables[{op, world}];
      for (const auto& r : tab.at("rows")) {
        require_keys(r, {"bytes", "best", "time_us"}, where + ".rows");
        TuningRow row;
        row.bytes = r.at("bytes").get<std::uint64_t>();
        for (const auto& [b, us] : r.at("time_us").items()) row.time_us[b] = us.get<double>();
        if (row.time_us.empty()) throw InputError(where + ".rows", "time_us is empty");
        rows.push_back(row);
      }
      std::sort(rows.begin(), rows.end(),
                [](const TuningRow& a, const TuningRow& b) { return a.bytes < b.bytes; });
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

void TuningTable::save(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw InputError(path, "cannot write tuning table");
  out << to_json();
}

std::optional<std::string> TuningTable::pick(OpKind op, int world_size, std::uint64_t bytes,
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
    if (std::find(allowed.begin(), allowed.end(), b) != allowed.end() && us < t) t = us, best = b;
  return best;
}

}  // namespace chorus::rt
