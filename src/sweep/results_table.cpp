#include "sweep/results_table.h"

#include <algorithm>
#include <set>

namespace chorus::sweep {
namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_value(const nlohmann::ordered_json& v) {
  if (v.is_string()) return csv_field(v.get<std::string>());
  if (v.is_null()) return "";
  return csv_field(v.dump());  // numbers with full precision, booleans as true/false
}

void add_row(std::string& out, const std::vector<std::string>& fields) {
  for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + fields[i];
  out += "\n";
}

}  // namespace

ResultsTable results_table(const Spec& spec, const std::vector<std::string>& keys,
                           const std::map<std::string, Row>& rows) {
  ResultsTable t;
  t.params = spec.axes;
  std::set<std::string> fixed;
  for (const auto& p : spec.points)
    for (const auto& kv : p)
      if (std::find(t.params.begin(), t.params.end(), kv.first) == t.params.end()) fixed.insert(kv.first);
  t.params.insert(t.params.end(), fixed.begin(), fixed.end());
  std::set<std::string> seen;
  for (const auto& key : keys) {
    const auto it = rows.find(key);
    if (it == rows.end()) continue;
    t.rows.push_back(&it->second);
    for (const auto& [name, value] : it->second.metrics.items()) {
      if (!seen.insert(name).second) continue;
      const bool clash = std::find(t.params.begin(), t.params.end(), name) != t.params.end();
      t.metrics.emplace_back(clash ? "result." + name : name, name);
    }
  }
  return t;
}

std::string to_csv(const ResultsTable& table) {
  std::vector<std::string> header{"key"};
  for (const auto& p : table.params) header.push_back(csv_field(p));
  for (const auto& m : table.metrics) header.push_back(csv_field(m.first));
  header.emplace_back("error");
  std::string out;
  add_row(out, header);
  for (const Row* row : table.rows) {
    std::vector<std::string> fields{row->key};
    for (const auto& p : table.params) fields.push_back(row->params.contains(p) ? csv_value(row->params[p]) : "");
    for (const auto& m : table.metrics)
      fields.push_back(row->metrics.contains(m.second) ? csv_value(row->metrics[m.second]) : "");
    fields.push_back(csv_field(row->error));
    add_row(out, fields);
  }
  return out;
}

}  // namespace chorus::sweep
