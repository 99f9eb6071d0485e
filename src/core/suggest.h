#pragma once
// "Did you mean ...?" hints for misspelt names (keys, presets, backends).
#include <string>
#include <vector>

namespace chorus {

// Levenshtein distance between two strings (case-sensitive).
std::size_t edit_distance(const std::string& a, const std::string& b);

// Returns " (did you mean 'x'?)" for the closest candidate within a small distance, else "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace chorus
