#pragma once
// Checked fields of a YAML document (yaml-cpp): every error is an InputError that names the file
// and line ("file:line") and the field. Shared by the network and workload parsers.
#include <limits>
#include <string>
#include <type_traits>
#include <vector>
#include <yaml-cpp/yaml.h>

#include <fmt/format.h>

#include "core/error.h"

namespace chorus::yaml_fields {

// Where a node is: "source:line" (1-based), or the source alone when yaml-cpp has no mark.
struct Source {
  std::string name;
  std::string at(const YAML::Node& node) const;
};

// A YAML node of a shape the parser's checks did not foresee (yaml-cpp threw while converting
// it): still the file's fault, as an InputError naming source:line.
InputError structure_error(const YAML::Exception& e, const std::string& source_name);

// Parses `text`; a syntax error names source:line.
YAML::Node load(const std::string& text, const std::string& source_name);

// Every key of `map` must be a plain name among `allowed` (else: the key, a did-you-mean, the
// allowed keys). `where` prefixes messages ("parallelism: ").
void check_keys(const Source& src, const YAML::Node& map, const std::vector<std::string>& allowed,
                const std::string& where);

// map[key], which must be present.
YAML::Node require(const Source& src, const YAML::Node& map, const std::string& key, const std::string& where);

// A scalar converted to T; `expected` describes T for the message ("an integer").
template <typename T>
T scalar(const Source& src, const YAML::Node& node, const std::string& field, const char* expected) {
  if (!node.IsScalar()) throw InputError(src.at(node), fmt::format("field '{}' must be {}", field, expected));
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)  // "2147483648" is an integer, out of range
      throw InputError(src.at(node), fmt::format("field '{}' must be {} in {}..{}, got '{}'", field, expected,
                                                 std::numeric_limits<T>::min(), std::numeric_limits<T>::max(),
                                                 node.as<std::string>()));
    throw InputError(src.at(node),
                     fmt::format("field '{}' must be {}, got '{}'", field, expected, node.as<std::string>()));
  }
}

}  // namespace chorus::yaml_fields
