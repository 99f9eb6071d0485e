#include "core/plot_call.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <system_error>

#include "core/error.h"

extern char** environ;

#ifndef CHORUS_PLOT_PYTHON
#error "CHORUS_PLOT_PYTHON (the interpreter for chorus.plot) is set by src/core/CMakeLists.txt"
#endif
#ifndef CHORUS_PYTHON_DIR
#error "CHORUS_PYTHON_DIR (the directory holding the chorus package) is set by src/core/CMakeLists.txt"
#endif

namespace chorus {
namespace {

constexpr const char* kInstallHint = "plots need matplotlib: install python3-matplotlib (scripts/install-deps.sh)";

std::string errno_text(int err) { return std::generic_category().message(err); }

// Closes a pipe end once.
struct Fd {
  int fd = -1;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

}  // namespace

std::string plot_python() {
  const char* env = std::getenv("CHORUS_PLOT_PYTHON");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(CHORUS_PLOT_PYTHON);
}

std::vector<std::string> draw_figures(const std::string& study, const std::string& dir) {
  const std::string python = plot_python();
  const std::string shown = fmt::format("{} -m chorus.plot {} {}", python, study, dir);

  // Environment: ours, with the package directory first on PYTHONPATH.
  std::string pythonpath = "PYTHONPATH=" CHORUS_PYTHON_DIR;
  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "PYTHONDONTWRITEBYTECODE=", 24) == 0) continue;
    if (std::strncmp(*e, "PYTHONPATH=", 11) == 0) {
      if ((*e)[11] != '\0') pythonpath += std::string(":") + (*e + 11);
    } else {
      env_store.emplace_back(*e);
    }
  }
  env_store.push_back(pythonpath);
  env_store.emplace_back("PYTHONDONTWRITEBYTECODE=1");  // no __pycache__ in the source tree
  std::vector<char*> envp;
  for (auto& s : env_store) envp.push_back(s.data());
  envp.push_back(nullptr);

  // "--": a directory named like an option is still the directory.
  std::string a0 = python, a1 = "-m", a2 = "chorus.plot", a3 = study, a4 = "--", a5 = dir;
  char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data(), a4.data(), a5.data(), nullptr};

  // The child's stdout (the figures written, one path a line) comes back through a pipe; its
  // stderr is ours, so its error message reaches the user as it is.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw InputError("plot", "cannot create a pipe: " + errno_text(errno));
  Fd read_end{fds[0]}, write_end{fds[1]};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, write_end.fd, STDOUT_FILENO);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, python.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  write_end.reset();
  if (rc != 0)
    throw InputError("plot", fmt::format("cannot start '{}': {}; the data files are written; {}", python,
                                         errno_text(rc), kInstallHint));
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(read_end.fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string how = WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                                              : fmt::format("signal {}", WTERMSIG(status));
    throw InputError("plot",
                     fmt::format("'{}' failed ({}; its message is above); the data files are written", shown, how));
  }
  std::vector<std::string> written;
  std::size_t start = 0;
  while (start < out.size()) {
    std::size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    if (end > start) written.push_back(out.substr(start, end - start));
    start = end + 1;
  }
  return written;
}

}  // namespace chorus
