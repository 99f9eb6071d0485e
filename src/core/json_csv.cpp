#include "core/json_csv.h"

#include <utility>
#include <vector>

#include <fmt/format.h>

namespace chorus {
namespace {

using Cells = std::vector<std::pair<std::string, std::string>>;

std::string cell(const nlohmann::json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string quoted = "\"";
    for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
  }
  if (v.is_number_float()) return fmt::format("{}", v.get<double>());  // shortest exact form
  if (v.is_null()) return "";
  return v.dump();
}

void flatten(const nlohmann::json& object, const std::string& prefix, const std::string& skip, Cells& out) {
  for (const auto& [key, value] : object.items()) {
    if (key == skip) continue;
    if (value.is_object())
      flatten(value, prefix + key + ".", "", out);
    else if (!value.is_array())
      out.emplace_back(prefix + key, cell(value));
  }
}

std::string line(const Cells& cells, bool header) {
  std::string s;
  for (const auto& [name, value] : cells) s += (s.empty() ? "" : ",") + (header ? name : value);
  return s + "\n";
}

}  // namespace

std::string json_to_csv(const nlohmann::json& object, const std::string& rows_key, const std::string& row_prefix) {
  Cells common;
  flatten(object, "", rows_key, common);
  if (rows_key.empty() || !object.contains(rows_key) || object[rows_key].empty())
    return line(common, true) + line(common, false);
  std::string out;
  for (const auto& row : object[rows_key]) {
    Cells cells = common;
    flatten(row, row_prefix, "", cells);
    if (out.empty()) out = line(cells, true);
    out += line(cells, false);
  }
  return out;
}

}  // namespace chorus
