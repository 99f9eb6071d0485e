#pragma once
// Writing a whole text file (CSV, JSON, YAML) in one call, with an error that names the file;
// a study's output directory.
#include <string>

#include <nlohmann/json.hpp>
#include <vector>

namespace chorus {

// The whole of `path`; InputError(path, "cannot open <what>") if it cannot be read.
std::string read_text_file(const std::string& path, const std::string& what);

// Writes `content` to `path` (truncating); "-" is standard output. Does not create directories.
// Throws chorus::InputError(path, reason) if the file cannot be written.
void write_text_file(const std::string& path, const std::string& content);

// Creates `dir` with its parents and checks that a file can be written in it, so that a study
// refuses a bad --out before it computes (InputError("out", ...)).
void ensure_writable_dir(const std::string& dir);

// `json` written as a file (indented by one space, newline-terminated); "-" is standard output.
void write_json_file(const std::string& path, const nlohmann::json& json);

// A study's output directory (`--out DIR`): created with its parents on construction
// (InputError("out", ...) if it cannot be); write() puts a file in it and remembers its path.
class OutputDir {
 public:
  explicit OutputDir(std::string dir);
  // Writes DIR/name; returns its path.
  const std::string& write(const std::string& name, const std::string& content);
  const std::string& dir() const { return dir_; }
  // Every file written so far, in order.
  std::vector<std::string>& written() { return written_; }

 private:
  std::string dir_;
  std::vector<std::string> written_;
};

}  // namespace chorus
