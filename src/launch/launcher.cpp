#include "launch/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <thread>

#include "core/error.h"
#include "rt/errors.h"
#include "rt/rendezvous/tcp_store.h"
#include "launch/rank_output.h"

extern char** environ;

namespace chorus::rt {

namespace {

volatile sig_atomic_t g_interrupted = 0;
void on_signal(int sig) { g_interrupted = sig; }

std::string status_text(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "ended";
}

// A TCP port on 127.0.0.1 for torch.distributed's store (MASTER_PORT), held by a socket that is
// bound with SO_REUSEADDR but never listens: nothing else is handed that port while the job
// runs, and rank 0's TCPStore (SO_REUSEADDR too) may still bind it. The socket is closed on
// exec and at exit; -1 when no port could be had (the variables are then not set).
int hold_free_port(int* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    return -1;
  }
  *port = ntohs(a.sin_port);
  return fd;
}

// Whether `path` names a Python interpreter (python, python3, python3.11, ...).
bool is_python(const std::string& path) {
  const std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (base.rfind("python", 0) != 0) return false;
  return std::all_of(base.begin() + 6, base.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
}

std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

// The interpreter chorus's Python modules were built for (src/launch/CMakeLists.txt).
#ifndef CHORUS_BUILT_PYTHON
#define CHORUS_BUILT_PYTHON "/usr/bin/python3"
#define CHORUS_BUILT_PYTHON_VERSION "unknown"
#endif

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// The program as execvp would find it, resolved before fork (execvp may allocate). A name that
// is not found is returned unchanged: execve then fails in the child and the rank reports it.
std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = dirs.find(':', begin);
    std::string dir = dirs.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (end == std::string::npos) return name;
    begin = end + 1;
  }
}

// Makes sure descriptors 0, 1 and 2 are open, so that no pipe of the launcher lands on them.
void ensure_std_fds() {
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      const int null_fd = ::open("/dev/null", O_RDWR);  // lowest free descriptor: fd itself
      if (null_fd >= 0 && null_fd != fd) ::close(null_fd);
    }
}

void pipe_cloexec(int fds[2], const char* what) {
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw InputError("launch", fmt::format("cannot create the {} pipe: {}", what, std::strerror(errno)));
}

// The record a rank reads from the start gate before exec: the store's port, NUL-padded.
constexpr std::size_t kGateRecord = 8;
// The record a child writes to the exec-error pipe when execve fails: rank, errno.
struct ExecError {
  std::int32_t rank;
  std::int32_t error;
};

// Everything a child needs between fork and exec, prepared by the parent: after fork the child
// makes only async-signal-safe calls (no allocation, no locks, no stdio).
struct ChildPlan {
  pid_t launcher = 0;
  pid_t pgid = 0;  // 0 for rank 0, which founds the job's process group
  const char* path = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  char* port_slot = nullptr;  // inside envp: where the store's port goes
  int gate_read = -1;
  int error_write = -1;
  int out_write = -1, err_write = -1;  // the rank's stdout (--tag-output) and stderr pipes
  bool bind = false;
  cpu_set_t cpu{};
  bool restore_nofile = false;
  rlimit nofile{};
  struct sigaction old_int {
  }, old_term{};
};

[[noreturn]] void run_child(const ChildPlan& p, int rank) {
  // Die with the launcher. PR_SET_PDEATHSIG is tied to the forking thread (the one in launch());
  // if the launcher died before the call, we were already re-parented: leave now.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != p.launcher) ::_exit(128 + SIGKILL);
  ::setpgid(0, p.pgid);
  ::sigaction(SIGINT, &p.old_int, nullptr);
  ::sigaction(SIGTERM, &p.old_term, nullptr);
  if (p.out_write >= 0) ::dup2(p.out_write, 1);  // dup2 clears close-on-exec on the copy
  if (p.err_write >= 0) ::dup2(p.err_write, 2);
  if (p.bind) ::sched_setaffinity(0, sizeof p.cpu, &p.cpu);
  if (p.restore_nofile) ::setrlimit(RLIMIT_NOFILE, &p.nofile);
  // Wait at the gate until the store serves: the launcher writes one record per rank.
  char record[kGateRecord];
  std::size_t got = 0;
  while (got < kGateRecord) {
    const ssize_t n = ::read(p.gate_read, record + got, kGateRecord - got);
    if (n > 0) {
      got += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      ::_exit(127);  // the launcher gave up before the store served (it reports why)
    }
  }
  for (std::size_t i = 0; i < kGateRecord; ++i) p.port_slot[i] = record[i];
  // Only 0, 1, 2 and the exec-error pipe survive; the pipe closes itself on a successful exec.
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    if (p.error_write > 3) ::close_range(3, static_cast<unsigned>(p.error_write) - 1, 0);
    ::close_range(static_cast<unsigned>(p.error_write) + 1, ~0U, 0);
  }
  ::execve(p.path, p.argv, p.envp);
  const ExecError e{rank, errno};
  [[maybe_unused]] const ssize_t n = ::write(p.error_write, &e, sizeof e);
  ::_exit(127);
}

// Polls the ranks' open streams for up to `timeout_ms` and forwards what arrived; then prints
// the merged lines whose window has passed. Returns the number of streams that had something.
int pump_streams(std::vector<RankStream>& streams, MergedLines& merged, int timeout_ms) {
  std::vector<pollfd> fds;
  std::vector<std::size_t> which;
  for (std::size_t i = 0; i < streams.size(); ++i)
    if (streams[i].fd >= 0) {
      fds.push_back({streams[i].fd, POLLIN, 0});
      which.push_back(i);
    }
  int ready = 0;
  if (fds.empty()) {
    if (timeout_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
  } else if (::poll(fds.data(), fds.size(), timeout_ms) > 0) {
    for (std::size_t k = 0; k < fds.size(); ++k)
      if (fds[k].revents != 0) {
        ++ready;
        streams[which[k]].pump();
      }
  }
  merged.flush(MergedLines::Clock::now(), false);
  return ready;
}

}  // namespace

std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_./=:,+@%", c) != nullptr;
  });
  if (plain) return word;
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int usable_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
  return std::max(1, CPU_COUNT(&allowed));
}

int launch(const LaunchOptions& options) {
  if (options.ranks < 1 || options.ranks > 4096)
    throw InputError("ranks", fmt::format("number of ranks must be in [1, 4096], got {}", options.ranks));
  if (options.command.empty()) throw InputError("launch", "no program given (usage: chorus launch -n N -- prog args)");
  if (!(options.kill_grace_s >= 0 && options.kill_grace_s <= 3600))  // NaN fails both
    throw InputError("kill_grace_s", fmt::format("must be in 0..3600 seconds, got {}", options.kill_grace_s));

  if (options.bind != "auto" && options.bind != "core" && options.bind != "none")
    throw InputError("bind", "expected auto, core or none, got '" + options.bind + "'");
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  std::vector<int> cpus;
  if (::sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  const bool bind = !cpus.empty() && (options.bind == "core" ||
                                      (options.bind == "auto" && options.ranks <= static_cast<int>(cpus.size())));
  const auto ranks = static_cast<std::size_t>(options.ranks);
  // Far more ranks than CPUs is a typo more often than a plan (-n 1000 for -n 100): each rank is
  // a process with its own runtime, threads and buffers. Allowed when asked for.
  const std::size_t most = std::max<std::size_t>(64, 16 * std::max<std::size_t>(1, cpus.size()));
  if (ranks > most && !options.oversubscribe)
    throw InputError("ranks",
                     fmt::format("{} ranks on {} CPUs: more than the {} (at least 64, 16 per CPU) the launcher "
                                 "starts without --oversubscribe",
                                 options.ranks, cpus.size(), most));
  if (!cpus.empty() && ranks > cpus.size() && std::getenv(kOversubscribedNoted) == nullptr)
    std::fprintf(stderr,
                 "chorus launch: %d ranks on %zu CPUs: ranks take turns on the CPUs, so times are longer "
                 "than with a CPU per rank\n",
                 options.ranks, cpus.size());

  ensure_std_fds();
  // The launcher holds a pipe per rank (two with --tag-output): raise the soft descriptor limit
  // if it is too low (the ranks get the original limit back).
  rlimit nofile{};
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  const rlimit original_nofile = nofile;
  bool raised_nofile = false;
  {
    const rlim_t needed = (options.tag_output ? 2 : 1) * ranks + 64;
    if (nofile.rlim_cur != RLIM_INFINITY && nofile.rlim_cur < needed) {
      if (nofile.rlim_max != RLIM_INFINITY && nofile.rlim_max < needed)
        throw InputError("ranks",
                         fmt::format("{} ranks need {} open descriptors, the hard limit is {} (raise `ulimit -Hn`)",
                                     options.ranks, needed, nofile.rlim_max));
      nofile.rlim_cur = needed;
      if (::setrlimit(RLIMIT_NOFILE, &nofile) != 0)
        throw InputError("ranks",
                         fmt::format("cannot raise the descriptor limit to {}: {}", needed, std::strerror(errno)));
      raised_nofile = true;
    }
  }

  const std::string run_id = fmt::format("l{}", ::getpid());
  // Made before the ranks are forked (the store itself starts after them, see above).
  const std::string token = make_job_token();
  const std::string path = resolve_program(options.command[0]);

  // Everything the children need is built before fork(): after it, only async-signal-safe calls.
  std::vector<char*> argv;
  for (const auto& a : options.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> base_env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("CHORUS_RANK=", 0) == 0 || entry.rfind("CHORUS_WORLD_SIZE=", 0) == 0 ||
        entry.rfind("CHORUS_LOCAL_RANK=", 0) == 0 || entry.rfind("CHORUS_STORE_ADDR=", 0) == 0 ||
        entry.rfind("CHORUS_RUN_ID=", 0) == 0 || entry.rfind("CHORUS_STORE_TOKEN=", 0) == 0)
      continue;
    base_env.push_back(entry);
  }
  // torch.distributed's environment (as torchrun sets it), so that an unchanged
  // init_process_group() finds its rank and store; variables the user set are kept.
  std::vector<std::string> torch_keys = {"RANK",        "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
                                         "MASTER_ADDR", "MASTER_PORT"};
  std::erase_if(torch_keys, [](const std::string& k) { return std::getenv(k.c_str()) != nullptr; });
  int master_port = 0;
  const bool wants_port = std::find(torch_keys.begin(), torch_keys.end(), "MASTER_PORT") != torch_keys.end();
  const int port_fd = wants_port ? hold_free_port(&master_port) : -1;
  if (wants_port && port_fd < 0) std::erase(torch_keys, std::string("MASTER_PORT"));
  struct ClosePort {
    int fd;
    ~ClosePort() {
      if (fd >= 0) ::close(fd);
    }
  } close_port{port_fd};
  // OpenMP's threads (torch's intra-op pool among them) of N ranks on C CPUs: C / N each, as
  // torchrun sets it, unless the user has chosen; said once per process.
  std::string omp_threads;
  if (std::getenv("OMP_NUM_THREADS") == nullptr) {
    const int cpu_count = std::max(1, static_cast<int>(cpus.size()));
    const int threads = std::max(1, cpu_count / options.ranks);
    omp_threads = fmt::format("OMP_NUM_THREADS={}", threads);
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      std::fprintf(stderr,
                   "chorus launch: setting OMP_NUM_THREADS=%d for each rank (%d CPUs / %d ranks) so that the "
                   "ranks' threads do not overload the CPUs; set OMP_NUM_THREADS to choose another value\n",
                   threads, cpu_count, options.ranks);
  }
  // The store's port is not known yet (the store starts after the forks): each child copies it
  // into the NUL-filled tail of its CHORUS_STORE_ADDR entry.
  const std::string addr_head = "CHORUS_STORE_ADDR=127.0.0.1:";
  std::vector<std::vector<std::string>> envs(ranks, base_env);
  std::vector<std::vector<char*>> envps(ranks);
  std::vector<char*> port_slots(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    auto& env = envs[r];
    env.push_back(fmt::format("CHORUS_RANK={}", r));
    env.push_back(fmt::format("CHORUS_LOCAL_RANK={}", r));
    env.push_back(fmt::format("CHORUS_WORLD_SIZE={}", options.ranks));
    env.push_back(addr_head + std::string(kGateRecord, '\0'));
    env.push_back("CHORUS_RUN_ID=" + run_id);
    env.push_back("CHORUS_STORE_TOKEN=" + token);
    for (const auto& k : torch_keys) {
      std::string v = k == "RANK" || k == "LOCAL_RANK" ? std::to_string(r)
                      : k == "MASTER_ADDR"             ? "127.0.0.1"
                      : k == "MASTER_PORT"             ? std::to_string(master_port)
                                                       : std::to_string(options.ranks);
      env.push_back(k + "=" + v);
    }
    if (!omp_threads.empty()) env.push_back(omp_threads);
    for (auto& s : env) envps[r].push_back(s.data());
    envps[r].push_back(nullptr);
    port_slots[r] = envs[r][base_env.size() + 3].data() + addr_head.size();
  }

  int gate[2], exec_errors[2];
  pipe_cloexec(gate, "start gate");
  pipe_cloexec(exec_errors, "exec status");
  ::fcntl(exec_errors[0], F_SETFL, O_NONBLOCK);
  std::vector<RankStream> streams;
  streams.reserve(2 * ranks);
  // Ranks that run a Python other than the one chorus's modules were built for: their import
  // failures get a note naming both interpreters.
  bool import_failure = false;
  const bool other_python = is_python(path) && real_path(path) != real_path(CHORUS_BUILT_PYTHON);
  MergedLines merged(2);

  ChildPlan plan;
  plan.launcher = ::getpid();
  plan.path = path.c_str();
  plan.argv = argv.data();
  plan.gate_read = gate[0];
  plan.error_write = exec_errors[1];
  plan.bind = bind;
  plan.restore_nofile = raised_nofile;
  plan.nofile = original_nofile;

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &plan.old_int);
  sigaction(SIGTERM, &sa, &plan.old_term);
  auto restore_signals = [&] {
    sigaction(SIGINT, &plan.old_int, nullptr);
    sigaction(SIGTERM, &plan.old_term, nullptr);
  };

  std::vector<pid_t> pids(ranks, -1);
  pid_t pgid = 0;
  bool fork_failed = false;
  std::fflush(stdout);
  std::fflush(stderr);
  for (std::size_t r = 0; r < ranks && !fork_failed; ++r) {
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    {
      if ((options.tag_output && ::pipe2(out, O_CLOEXEC) != 0) || ::pipe2(err, O_CLOEXEC) != 0) {
        std::fprintf(stderr, "chorus launch: cannot create the output pipes of rank %zu: %s\n", r,
                     std::strerror(errno));
        for (int fd : {out[0], out[1]})
          if (fd >= 0) ::close(fd);
        fork_failed = true;
        break;
      }
    }
    plan.pgid = pgid;
    plan.envp = envps[r].data();
    plan.port_slot = port_slots[r];
    plan.out_write = out[1];
    plan.err_write = err[1];
    if (bind) {
      CPU_ZERO(&plan.cpu);
      CPU_SET(cpus[r % cpus.size()], &plan.cpu);
    }
    const pid_t pid = ::fork();
    if (pid == 0) run_child(plan, static_cast<int>(r));
    if (pid < 0) {
      std::fprintf(stderr, "chorus launch: fork failed for rank %zu: %s\n", r, std::strerror(errno));
      fork_failed = true;
    } else {
      if (pgid == 0) pgid = pid;
      ::setpgid(pid, pgid);  // also here, so the group exists whichever process runs first
      pids[r] = pid;
    }
    for (int fd : {out[1], err[1]})
      if (fd >= 0) ::close(fd);
    const int rank = static_cast<int>(r);
    if (pid > 0 && options.tag_output) {
      streams.push_back({out[0], rank, 1, fmt::format("[{}]<stdout>: ", r), nullptr, {}});
      streams.push_back(
          {err[0], rank, 2, fmt::format("[{}]<stderr>: ", r), nullptr, {}, other_python ? &import_failure : nullptr});
    } else if (pid > 0) {
      streams.push_back({err[0], rank, 2, {}, &merged, {}, other_python ? &import_failure : nullptr});
    } else {
      for (int fd : {out[0], err[0]})
        if (fd >= 0) ::close(fd);
    }
  }
  ::close(exec_errors[1]);

  // The ranks wait at the gate; only now does the launcher start a thread (the store's).
  std::unique_ptr<TcpStoreServer> server;
  std::string store_error;
  if (!fork_failed) {
    try {
      server = std::make_unique<TcpStoreServer>("127.0.0.1", 0, token);
    } catch (const std::exception& e) {
      store_error = e.what();
    }
  }
  if (server) {
    char record[kGateRecord] = {};
    const std::string port = std::to_string(server->port());
    std::memcpy(record, port.data(), port.size());
    for (std::size_t r = 0; r < ranks; ++r) write_all_fd(gate[1], record, kGateRecord);
  } else if (pgid > 0) {
    ::kill(-pgid, SIGKILL);  // no rank has exec'd yet: nothing to report for them
  }
  ::close(gate[1]);
  ::close(gate[0]);

  using Clock = std::chrono::steady_clock;
  int result = 0;
  std::size_t alive = 0;
  for (pid_t p : pids) alive += p > 0 ? 1 : 0;
  if (!server) result = 1;
  bool failing = result != 0;
  bool result_from_signal = false;     // `result` is that of a rank killed by a signal
  const bool quiet_failure = failing;  // the ranks were killed at the gate: nothing to report
  Clock::time_point term_at{}, kill_at{};
  bool termed = false;
  if (failing) term_at = Clock::now();
  auto signal_job = [&](int sig) {
    if (pgid > 0) ::kill(-pgid, sig);
    for (pid_t p : pids)
      if (p > 0) ::kill(p, sig);  // in case one had not joined the group
  };
  auto report_exec_errors = [&] {
    ExecError e{};
    while (::read(exec_errors[0], &e, sizeof e) == static_cast<ssize_t>(sizeof e))
      std::fprintf(stderr, "chorus launch: rank %d cannot execute '%s': %s\n", e.rank, path.c_str(),
                   std::strerror(e.error));
  };
  while (alive > 0) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      report_exec_errors();
      for (std::size_t r = 0; r < pids.size(); ++r) {
        if (pids[r] != pid) continue;
        pids[r] = -1;
        --alive;
        const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        for (auto& s : streams)
          if (s.rank == static_cast<int>(r)) s.drain();
        if (!ok && !termed && !quiet_failure) {
          merged.note(fmt::format("chorus launch: rank {} (pid {}) {}", r, pid, status_text(status)), Clock::now());
          // A rank killed by a signal (before the launcher stops anyone) is the likely cause of a
          // failure: its peers see it die and exit with an error, and one of them may be reaped
          // first. So a signal death takes over the status from a plain error exit.
          if (failing && WIFSIGNALED(status) && !result_from_signal) {
            result = exit_code(status);
            result_from_signal = true;
          }
          if (!failing) {
            failing = true;
            result = exit_code(status);
            result_from_signal = WIFSIGNALED(status);
            if (result == 0) result = 1;
            term_at = Clock::now() + std::chrono::milliseconds(static_cast<long>(options.kill_grace_s * 1000));
            if (alive > 0)
              merged.note(
                  fmt::format("chorus launch: stopping the other ranks (after {:.1f} s grace)", options.kill_grace_s),
                  Clock::now());
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
      signal_job(SIGTERM);
      termed = true;
      kill_at = now + std::chrono::seconds(2);
    }
    if (termed && now >= kill_at) {
      signal_job(SIGKILL);
      kill_at = now + std::chrono::hours(1);
    }
    pump_streams(streams, merged, 5);
  }
  // Processes the ranks started and left behind in the job's group go with a failed job.
  if (failing && pgid > 0) ::kill(-pgid, SIGKILL);
  report_exec_errors();
  ::close(exec_errors[0]);

  // What the ranks wrote before exiting is in the pipes; forward it (bounded: a process the
  // ranks left behind may hold a pipe open), then complete the last partial lines.
  const auto drain_until = Clock::now() + std::chrono::seconds(2);
  while (Clock::now() < drain_until && pump_streams(streams, merged, 0) > 0) {
  }
  for (auto& s : streams) {
    if (s.fd < 0) continue;
    s.forward(true);
    ::close(s.fd);
  }
  merged.flush(Clock::now(), true);
  if (import_failure) {
    std::string fixed = fmt::format("chorus launch -n {} -- {}", options.ranks, CHORUS_BUILT_PYTHON);
    for (std::size_t i = 1; i < options.command.size(); ++i) fixed += " " + shell_word(options.command[i]);
    std::fprintf(stderr,
                 "chorus launch: the ranks ran the Python %s (%s), which failed to import a module; chorus's "
                 "Python modules and torch backend were built for %s (Python %s). Run the ranks with that "
                 "interpreter:\n  %s\n",
                 options.command[0].c_str(), real_path(path).c_str(), CHORUS_BUILT_PYTHON, CHORUS_BUILT_PYTHON_VERSION,
                 fixed.c_str());
  }
  server.reset();
  if (raised_nofile) ::setrlimit(RLIMIT_NOFILE, &original_nofile);
  restore_signals();
  if (!store_error.empty()) throw CommError("launch: cannot start the rendezvous store: " + store_error);
  return result;
}

}  // namespace chorus::rt
