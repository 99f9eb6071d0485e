#pragma once
// Writing a whole text file (CSV, JSON, YAML) in one call, with an error that names the file.
#include <string>

namespace chorus {

// Writes `content` to `path` (truncating). Does not create directories.
// Throws chorus::InputError(path, reason) if the file cannot be written.
void write_text_file(const std::string& path, const std::string& content);

}  // namespace chorus
