#pragma once
// Comma-separated settings from the environment (CHORUS_BACKEND_MAP, CHORUS_BACKENDS,
// CHORUS_COMPRESSION): items trimmed of blanks, empty items kept so that the parsers can name
// them ("entry 2 ('')").
#include <string_view>
#include <vector>

namespace chorus::torch_backend {

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

inline std::vector<std::string_view> split_env_list(std::string_view text) {
  std::vector<std::string_view> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::size_t end = comma == std::string_view::npos ? text.size() : comma;
    items.push_back(trim(text.substr(start, end - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

}  // namespace chorus::torch_backend
