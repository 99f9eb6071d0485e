#include "core/suggest.h"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace chorus {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string w = lower(word);
  std::size_t best = std::max<std::size_t>(3, w.size() / 3) + 1;
  std::string choice;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(w, lower(c));
    if (d < best) {
      best = d;
      choice = c;
    }
  }
  return choice.empty() ? "" : " (did you mean '" + choice + "'?)";
}

}  // namespace chorus
