#include "rt_tools/launcher.h"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <thread>

#include "core/error.h"
#include "rt/rendezvous/tcp_store.h"

extern char** environ;

namespace chorus::rt {

namespace {

volatile sig_atomic_t g_interrupted = 0;
void on_signal(int sig) { g_interrupted = sig; }

std::string status_text(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "ended";
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int launch(const LaunchOptions& options) {
  if (options.ranks < 1 || options.ranks > 4096)
    throw InputError("launch -n", fmt::format("number of ranks must be in [1, 4096], got {}", options.ranks));
  if (options.command.empty()) throw InputError("launch", "no program given (usage: chorus launch -n N -- prog args)");
  if (options.kill_grace_s < 0) throw InputError("launch --kill-grace-s", "must be >= 0");

  if (options.bind != "auto" && options.bind != "core" && options.bind != "none")
    throw InputError("launch --bind", "expected auto, core or none, got '" + options.bind + "'");
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  const bool bind = !cpus.empty() && (options.bind == "core" ||
                                      (options.bind == "auto" && options.ranks <= static_cast<int>(cpus.size())));

  TcpStoreServer server("127.0.0.1");
  const std::string store_addr = fmt::format("127.0.0.1:{}", server.port());
  const std::string run_id = fmt::format("l{}", ::getpid());

  // Everything the children need is built before fork(): after it, only exec.
  std::vector<char*> argv;
  for (const auto& a : options.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> base_env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("CHORUS_RANK=", 0) == 0 || entry.rfind("CHORUS_WORLD_SIZE=", 0) == 0 ||
        entry.rfind("CHORUS_LOCAL_RANK=", 0) == 0 || entry.rfind("CHORUS_STORE_ADDR=", 0) == 0 ||
        entry.rfind("CHORUS_RUN_ID=", 0) == 0)
      continue;
    base_env.push_back(entry);
  }
  std::vector<std::vector<std::string>> envs(static_cast<std::size_t>(options.ranks), base_env);
  std::vector<std::vector<char*>> envps(envs.size());
  for (int r = 0; r < options.ranks; ++r) {
    auto& env = envs[static_cast<std::size_t>(r)];
    env.push_back(fmt::format("CHORUS_RANK={}", r));
    env.push_back(fmt::format("CHORUS_LOCAL_RANK={}", r));
    env.push_back(fmt::format("CHORUS_WORLD_SIZE={}", options.ranks));
    env.push_back("CHORUS_STORE_ADDR=" + store_addr);
    env.push_back("CHORUS_RUN_ID=" + run_id);
    for (auto& s : env) envps[static_cast<std::size_t>(r)].push_back(s.data());
    envps[static_cast<std::size_t>(r)].push_back(nullptr);
  }

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {}, old_term {};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  std::vector<pid_t> pids(static_cast<std::size_t>(options.ranks), -1);
  std::fflush(stdout);
  std::fflush(stderr);
  for (int r = 0; r < options.ranks; ++r) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      std::fprintf(stderr, "chorus launch: fork failed for rank %d: %s\n", r, std::strerror(errno));
      for (pid_t p : pids)
        if (p > 0) ::kill(p, SIGKILL);
      break;
    }
    if (pid == 0) {
      if (bind) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[static_cast<std::size_t>(r) % cpus.size()], &one);
        ::sched_setaffinity(0, sizeof one, &one);
      }
      ::execvpe(argv[0], argv.data(), envps[static_cast<std::size_t>(r)].data());
      const char* msg = "chorus launch: cannot execute the program\n";
      [[maybe_unused]] const ssize_t n = ::write(2, msg, std::strlen(msg));
      ::_exit(127);
    }
    pids[static_cast<std::size_t>(r)] = pid;
  }

  using Clock = std::chrono::steady_clock;
  int result = 0;
  int alive = 0;
  for (pid_t p : pids) alive += p > 0 ? 1 : 0;
  if (alive < options.ranks) result = 1;
  bool failing = result != 0;
  Clock::time_point term_at{}, kill_at{};
  bool termed = false;
  if (failing) term_at = Clock::now();
  while (alive > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (std::size_t r = 0; r < pids.size(); ++r) {
        if (pids[r] != pid) continue;
        pids[r] = -1;
        --alive;
        const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok && !termed) {
          std::fprintf(stderr, "chorus launch: rank %zu (pid %d) %s\n", r, pid, status_text(status).c_str());
          if (!failing) {
            failing = true;
            result = exit_code(status);
            if (result == 0) result = 1;
            term_at = Clock::now() + std::chrono::milliseconds(static_cast<long>(options.kill_grace_s * 1000));
            if (alive > 0)
              std::fprintf(stderr, "chorus launch: stopping the other ranks (after %.1f s grace)\n", options.kill_grace_s);
          }
        }
      }
      continue;
    }
    if (g_interrupted != 0 && !failing) {
      failing = true;
      result = 128 + g_interrupted;
      term_at = Clock::now();
    }
    const auto now = Clock::now();
    if (failing && !termed && now >= term_at) {
      for (pid_t p : pids)
        if (p > 0) ::kill(p, SIGTERM);
      termed = true;
      kill_at = now + std::chrono::seconds(2);
    }
    if (termed && now >= kill_at) {
      for (pid_t p : pids)
        if (p > 0) ::kill(p, SIGKILL);
      kill_at = now + std::chrono::hours(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  return result;
}

}  // namespace chorus::rt
