#pragma once
// Reading and writing a whole text file (CSV, JSON, YAML) in one call, with an error that names
// the file; a study's output directory.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>
#include <vector>

namespace chorus {

// Every input file chorus reads whole (workload, topology, network, schedule, plan, traffic,
// tuning table, Chakra trace, ...) is at most this large: a bigger one, or a device or pipe that
// goes on past it (/dev/zero), is refused before it is read, not met by std::bad_alloc or by a
// process that grows until the OOM killer ends it. CHORUS_MAX_INPUT_BYTES sets another limit (a
// byte size as parse_bytes reads it: 2GiB).
inline constexpr std::uint64_t kDefaultMaxInputBytes = std::uint64_t{256} << 20;  // 256 MiB
inline constexpr const char* kMaxInputBytesVariable = "CHORUS_MAX_INPUT_BYTES";

// The limit in force: CHORUS_MAX_INPUT_BYTES if set, else kDefaultMaxInputBytes;
// InputError("CHORUS_MAX_INPUT_BYTES", ...) if the variable is not a byte size >= 1.
std::uint64_t max_input_bytes();

// The whole of `path` (read as bytes); `what` names it in errors ("the topology file").
// InputError(path, "cannot open <what>: <reason>") if it cannot be opened or read (a directory),
// InputError(path, "<what> ... is larger than the N limit on input files ...") if it is larger
// than `limit` bytes: a regular file's size is checked before anything is read; a device or pipe
// is read to at most limit + 1 bytes.
std::string read_text_file(const std::string& path, const std::string& what, std::uint64_t limit);
// ... with the limit in force (max_input_bytes()).
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
