#pragma once
// Splitting comma-separated lists ("shm,gloo", "4KiB,1MiB"): empty items are dropped.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace chorus {

inline std::vector<std::string> split_list(std::string_view text, char sep = ',') {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(sep, start), text.size());
    if (end > start) out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace chorus
