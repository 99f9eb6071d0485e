#pragma once
// Checked fields of a JSON object (nlohmann::json): every error is an InputError naming `where`
// and the field. The JSON counterpart of core/yaml_fields.h, shared by the schedule reader and
// `chorus profile`.
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace chorus::json_fields {

// nlohmann converts any number with a plain cast: 1e30 or 2.5 into an int is undefined or
// wrong. Only integers in range are accepted.
template <typename T>
void require_integer(const nlohmann::json& v, const std::string& key, const std::string& where) {
  const bool in_range =
      (v.is_number_unsigned() && v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())) ||
      (v.is_number_integer() && !v.is_number_unsigned() &&
       v.get<std::int64_t>() >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
       v.get<std::int64_t>() <= static_cast<std::int64_t>(std::numeric_limits<T>::max()));
  if (!in_range)
    throw InputError(where, fmt::format("field '{}' must hold integers in [{}, {}], got {}", key,
                                        std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), v.dump()));
}

template <typename T>
struct is_int_vector : std::false_type {};
template <typename E>
struct is_int_vector<std::vector<E>> : std::is_integral<E> {};

// j[key] as T: "missing field 'key'", integers (and integer lists) range-checked, any other
// mismatch "field 'key' has the wrong type (...)".
template <typename T>
T get(const nlohmann::json& j, const std::string& key, const std::string& where) {
  if (!j.contains(key)) throw InputError(where, fmt::format("missing field '{}'", key));
  if constexpr (std::is_same_v<T, bool>) {
    // bool is integral, but a JSON boolean is not a number: no range check.
  } else if constexpr (std::is_integral_v<T>) {
    require_integer<T>(j.at(key), key, where);
  } else if constexpr (is_int_vector<T>::value) {
    if (j.at(key).is_array())
      for (const auto& e : j.at(key)) require_integer<typename T::value_type>(e, key, where);
  }
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError(where, fmt::format("field '{}' has the wrong type ({})", key, j.at(key).type_name()));
  }
}

}  // namespace chorus::json_fields
