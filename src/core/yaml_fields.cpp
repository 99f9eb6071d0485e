#include "core/yaml_fields.h"

#include <algorithm>

#include "core/suggest.h"

namespace chorus::yaml_fields {

std::string Source::at(const YAML::Node& node) const {
  const auto mark = node.Mark();
  return mark.line >= 0 ? fmt::format("{}:{}", name, mark.line + 1) : name;
}

InputError structure_error(const YAML::Exception& e, const std::string& source_name) {
  return InputError(e.mark.line >= 0 ? fmt::format("{}:{}", source_name, e.mark.line + 1) : source_name,
                    "unexpected YAML structure: " + e.msg);
}

YAML::Node load(const std::string& text, const std::string& source_name) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError(fmt::format("{}:{}", source_name, e.mark.line + 1), "YAML syntax error: " + e.msg);
  }
}

void check_keys(const Source& src, const YAML::Node& map, const std::vector<std::string>& allowed,
                const std::string& where) {
  std::vector<std::pair<std::string, YAML::Node>> seen;
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) throw InputError(src.at(kv.first), fmt::format("{}a key must be a plain name", where));
    const auto key = kv.first.as<std::string>();
    // yaml-cpp keeps both entries of a repeated key and reads the first: the second would be
    // ignored without a word.
    for (const auto& [k, node] : seen)
      if (k == key)
        throw InputError(src.at(kv.first),
                         fmt::format("{}key '{}' given twice (first at {})", where, key, src.at(node)));
    seen.emplace_back(key, kv.first);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      throw InputError(src.at(kv.first), fmt::format("{}unknown key '{}'{}; allowed keys: {}", where, key,
                                                     did_you_mean(key, allowed), fmt::join(allowed, ", ")));
  }
}

YAML::Node require(const Source& src, const YAML::Node& map, const std::string& key, const std::string& where) {
  const YAML::Node node = map[key];
  if (!node) throw InputError(src.at(map), fmt::format("{}missing field '{}'", where, key));
  return node;
}

}  // namespace chorus::yaml_fields
