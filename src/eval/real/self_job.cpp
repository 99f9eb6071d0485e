#include "eval/real/self_job.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "core/error.h"

namespace chorus::eval {

std::string self_exe(const std::string& what) {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw InputError(what, "cannot find the chorus executable (/proc/self/exe)");
  return p.string();
}

std::string run_capture(const std::string& cmd, const std::string& what) {
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) throw InputError(what, "cannot start: " + cmd);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  const int status = ::pclose(f);
  if (status != 0) throw InputError(what, fmt::format("'{}' failed (status {})", cmd, status));
  return out;
}

}  // namespace chorus::eval
