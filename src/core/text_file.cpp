#include "core/text_file.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "core/error.h"

namespace chorus {

std::string read_text_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "cannot open " + what);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text_file(const std::string& path, const std::string& content) {
  if (path == "-") {  // every output-file flag: '-' is standard output
    std::fflush(stdout);
    if (std::fwrite(content.data(), 1, content.size(), stdout) != content.size() || std::fflush(stdout) != 0)
      throw InputError("-", "cannot write to standard output");
    return;
  }
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    const int err = errno;
    throw InputError(path, "cannot open for writing: " +
                               (err != 0 ? std::generic_category().message(err) : std::string("unknown error")));
  }
  bool ok = content.empty() || std::fwrite(content.data(), 1, content.size(), f) == content.size();
  int err = ok ? 0 : errno;
  if (std::fflush(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (std::fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    throw InputError(
        path, "cannot write: " + (err != 0 ? std::generic_category().message(err) : std::string("write failed")));
  }
}

void write_json_file(const std::string& path, const nlohmann::json& json) {
  write_text_file(path, json.dump(1) + "\n");
}

void ensure_writable_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError("out", fmt::format("cannot create directory '{}': {}", dir, ec.message()));
  // A directory may exist and still refuse files (permissions, a read-only mount): try one.
  const std::string probe = (std::filesystem::path(dir) / ".chorus-write-probe").string();
  std::FILE* f = std::fopen(probe.c_str(), "wb");
  if (f == nullptr) {
    const int err = errno;
    throw InputError("out",
                     fmt::format("cannot write into directory '{}': {}", dir, std::generic_category().message(err)));
  }
  std::fclose(f);
  std::filesystem::remove(probe, ec);
}

OutputDir::OutputDir(std::string dir) : dir_(std::move(dir)) { ensure_writable_dir(dir_); }

const std::string& OutputDir::write(const std::string& name, const std::string& content) {
  written_.push_back((std::filesystem::path(dir_) / name).string());
  write_text_file(written_.back(), content);
  return written_.back();
}

}  // namespace chorus
