#include "sweep/flatten.h"

#include <string>

namespace chorus::sweep {
namespace {

void add(nlohmann::ordered_json& out, const std::string& path, const nlohmann::ordered_json& v) {
  if (v.is_object()) {
    for (const auto& [k, item] : v.items()) add(out, path.empty() ? k : path + "." + k, item);
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.size(); ++i) add(out, path + "." + std::to_string(i), v[i]);
  } else {
    out[path] = v;
  }
}

}  // namespace

nlohmann::ordered_json flatten(const nlohmann::ordered_json& result) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  add(out, "", result);
  return out;
}

}  // namespace chorus::sweep
