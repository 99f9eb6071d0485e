#include "core/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "core/error.h"
#include "core/units.h"

namespace chorus {
namespace {

std::string reason(int err) { return std::generic_category().message(err); }

// "1.5 GiB (1610612736 bytes)"
std::string size_text(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= kGiB) return fmt::format("{:.1f} GiB ({} bytes)", b / static_cast<double>(kGiB), bytes);
  if (bytes >= kMiB) return fmt::format("{:.1f} MiB ({} bytes)", b / static_cast<double>(kMiB), bytes);
  return fmt::format("{} bytes", bytes);
}

// "the topology file is 1.5 GiB (...), more than the 256 MiB limit on input files (...)"
std::string over_limit(const std::string& what, const std::string& how, std::uint64_t limit) {
  return fmt::format("{} {} the {} limit on input files (set {} to raise it, e.g. {}=2GiB)", what, how,
                     format_bytes(limit), kMaxInputBytesVariable, kMaxInputBytesVariable);
}

// Closes the descriptor on every path out of read_text_file.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::uint64_t max_input_bytes() {
  const char* text = std::getenv(kMaxInputBytesVariable);
  if (text == nullptr || *text == '\0') return kDefaultMaxInputBytes;
  const Bytes limit = parse_bytes(text, kMaxInputBytesVariable);
  if (limit < 1) throw InputError(kMaxInputBytesVariable, "must be at least 1 byte");
  return limit;
}

std::string read_text_file(const std::string& path, const std::string& what) {
  return read_text_file(path, what, max_input_bytes());
}

std::string read_text_file(const std::string& path, const std::string& what, std::uint64_t limit) {
  errno = 0;
  const Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) throw InputError(path, fmt::format("cannot open {}: {}", what, reason(errno)));
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) throw InputError(path, fmt::format("cannot open {}: {}", what, reason(errno)));
  if (S_ISDIR(st.st_mode)) throw InputError(path, fmt::format("cannot open {}: {}", what, reason(EISDIR)));
  std::string text;
  if (S_ISREG(st.st_mode)) {
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size > limit) throw InputError(path, over_limit(what, "is " + size_text(size) + ", more than", limit));
    text.reserve(static_cast<std::size_t>(size));
  }
  // A device or a pipe has no size to check first (and a regular file may grow while it is
  // read): at most limit + 1 bytes are read, the one past the limit proves it is too large.
  char buffer[1 << 16];
  for (;;) {
    const std::uint64_t room = limit + 1 - text.size();
    const ssize_t n = ::read(file.fd, buffer, static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buffer, room)));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError(path, fmt::format("cannot read {}: {}", what, reason(errno)));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > limit)
      throw InputError(path,
                       over_limit(what, S_ISREG(st.st_mode) ? "grew while it was read, past" : "goes on past", limit));
  }
  return text;
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
