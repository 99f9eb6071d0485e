#include "launch/job_plan.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

#include "core/error.h"

extern char** environ;

// The interpreter chorus's Python modules were built for (src/launch/CMakeLists.txt).
#ifndef CHORUS_BUILT_PYTHON
#define CHORUS_BUILT_PYTHON "/usr/bin/python3"
#define CHORUS_BUILT_PYTHON_VERSION "unknown"
#endif

namespace chorus::launch {

namespace {

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

// The launcher's environment without the variables of a job it may itself run in.
std::vector<std::string> inherited_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (entry.rfind("CHORUS_RANK=", 0) == 0 || entry.rfind("CHORUS_WORLD_SIZE=", 0) == 0 ||
        entry.rfind("CHORUS_LOCAL_RANK=", 0) == 0 || entry.rfind("CHORUS_STORE_ADDR=", 0) == 0 ||
        entry.rfind("CHORUS_RUN_ID=", 0) == 0 || entry.rfind("CHORUS_STORE_TOKEN=", 0) == 0 ||
        entry.rfind("CHORUS_RT_BEACON=", 0) == 0)
      continue;
    env.push_back(entry);
  }
  return env;
}

// OpenMP's threads (torch's intra-op pool among them) of N ranks on C CPUs: C / N each, as
// torchrun sets it, unless the user has chosen (empty then); said once per process.
std::string omp_threads_entry(const LaunchOptions& options, const CpuPlan& plan) {
  if (std::getenv("OMP_NUM_THREADS") != nullptr) return {};
  const int cpu_count = std::max(1, static_cast<int>(plan.cpus.size()));
  const int threads = std::max(1, cpu_count / options.ranks);
  static std::atomic<bool> said{false};
  if (!said.exchange(true))
    std::fprintf(stderr,
                 "chorus launch: setting OMP_NUM_THREADS=%d for each rank (%d CPUs / %d ranks) so that the "
                 "ranks' threads do not overload the CPUs; set OMP_NUM_THREADS to choose another value\n",
                 threads, cpu_count, options.ranks);
  return fmt::format("OMP_NUM_THREADS={}", threads);
}

}  // namespace

void validate_options(const LaunchOptions& options) {
  if (options.ranks < 1 || options.ranks > 4096)
    throw InputError("ranks", fmt::format("number of ranks must be in [1, 4096], got {}", options.ranks));
  if (options.command.empty()) throw InputError("launch", "no program given (usage: chorus launch -n N -- prog args)");
  if (!(options.kill_grace_s >= 0 && options.kill_grace_s <= 3600))  // NaN fails both
    throw InputError("kill_grace_s", fmt::format("must be in 0..3600 seconds, got {}", options.kill_grace_s));
  if (options.bind != "auto" && options.bind != "core" && options.bind != "none")
    throw InputError("bind", "expected auto, core or none, got '" + options.bind + "'");
  if (!(options.stall_timeout_s >= 0 && options.stall_timeout_s <= 86400))  // NaN fails both
    throw InputError("stall_timeout_s",
                     fmt::format("must be in 0..86400 seconds (0: off), got {}", options.stall_timeout_s));
}

CpuPlan plan_cpus(const LaunchOptions& options) {
  CpuPlan plan;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed)) plan.cpus.push_back(c);
  const auto& cpus = plan.cpus;
  plan.bind = !cpus.empty() &&
              (options.bind == "core" || (options.bind == "auto" && options.ranks <= static_cast<int>(cpus.size())));
  const auto ranks = static_cast<std::size_t>(options.ranks);
  // Far more ranks than CPUs is a typo more often than a plan (-n 1000 for -n 100): each rank is
  // a process with its own runtime, threads and buffers. Allowed when asked for.
  const std::size_t most = std::max<std::size_t>(64, 16 * std::max<std::size_t>(1, cpus.size()));
  if (ranks > most && !options.oversubscribe)
    throw InputError("ranks",
                     fmt::format("{} ranks on {} CPUs: more than the {} (at least 64, 16 per CPU) the launcher "
                                 "starts without --oversubscribe",
                                 options.ranks, cpus.size(), most));
  if (!cpus.empty() && ranks > cpus.size() && !options.oversubscription_noted)
    std::fprintf(stderr,
                 "chorus launch: %d ranks on %zu CPUs: ranks take turns on the CPUs, so times are longer "
                 "than with a CPU per rank\n",
                 options.ranks, cpus.size());
  return plan;
}

void ensure_std_fds() {
  for (int fd = 0; fd <= 2; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      const int null_fd = ::open("/dev/null", O_RDWR);  // lowest free descriptor: fd itself
      if (null_fd >= 0 && null_fd != fd) ::close(null_fd);
    }
}

DescriptorLimit::DescriptorLimit(const LaunchOptions& options) {
  ::getrlimit(RLIMIT_NOFILE, &original_);
  rlimit nofile = original_;
  const bool two_pipes = options.tag_output || options.capture_stdout;
  const rlim_t needed = (two_pipes ? 2 : 1) * static_cast<rlim_t>(options.ranks) + 64;
  if (nofile.rlim_cur == RLIM_INFINITY || nofile.rlim_cur >= needed) return;
  if (nofile.rlim_max != RLIM_INFINITY && nofile.rlim_max < needed)
    throw InputError("ranks",
                     fmt::format("{} ranks need {} open descriptors, the hard limit is {} (raise `ulimit -Hn`)",
                                 options.ranks, needed, nofile.rlim_max));
  nofile.rlim_cur = needed;
  if (::setrlimit(RLIMIT_NOFILE, &nofile) != 0)
    throw InputError("ranks", fmt::format("cannot raise the descriptor limit to {}: {}", needed, std::strerror(errno)));
  raised_ = true;
}

DescriptorLimit::~DescriptorLimit() {
  if (raised_) ::setrlimit(RLIMIT_NOFILE, &original_);
}

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

bool runs_other_python(const std::string& path) {
  return is_python(path) && real_path(path) != real_path(CHORUS_BUILT_PYTHON);
}

std::string import_failure_note(const LaunchOptions& options, const std::string& path) {
  std::string fixed = fmt::format("chorus launch -n {} -- {}", options.ranks, CHORUS_BUILT_PYTHON);
  for (std::size_t i = 1; i < options.command.size(); ++i) fixed += " " + shell_word(options.command[i]);
  return fmt::format(
      "chorus launch: the ranks ran the Python {} ({}), which failed to import a module; chorus's Python modules and "
      "torch backend were built for {} (Python {}). Run the ranks with that interpreter:\n  {}\n",
      options.command[0], real_path(path), CHORUS_BUILT_PYTHON, CHORUS_BUILT_PYTHON_VERSION, fixed);
}

std::string job_run_id() { return fmt::format("l{}", ::getpid()); }

RankEnvironments::RankEnvironments(const LaunchOptions& options, const CpuPlan& cpus, const std::string& token,
                                   const std::vector<std::string>& job_entries) {
  const auto ranks = static_cast<std::size_t>(options.ranks);
  const std::vector<std::string> base_env = inherited_environment();
  // torch.distributed's environment (as torchrun sets it), so that an unchanged
  // init_process_group() finds its rank and store; variables the user set are kept.
  std::vector<std::string> torch_keys = {"RANK",        "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
                                         "MASTER_ADDR", "MASTER_PORT"};
  std::erase_if(torch_keys, [](const std::string& k) { return std::getenv(k.c_str()) != nullptr; });
  int master_port = 0;
  const bool wants_port = std::find(torch_keys.begin(), torch_keys.end(), "MASTER_PORT") != torch_keys.end();
  port_fd_ = wants_port ? hold_free_port(&master_port) : -1;
  if (wants_port && port_fd_ < 0) std::erase(torch_keys, std::string("MASTER_PORT"));
  const std::string omp_threads = omp_threads_entry(options, cpus);
  const std::string run_id = job_run_id();
  const std::string addr_head = "CHORUS_STORE_ADDR=127.0.0.1:";
  envs_.assign(ranks, base_env);
  envps_.resize(ranks);
  port_slots_.resize(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    auto& env = envs_[r];
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
    env.insert(env.end(), job_entries.begin(), job_entries.end());
    for (auto& s : env) envps_[r].push_back(s.data());
    envps_[r].push_back(nullptr);
    port_slots_[r] = envs_[r][base_env.size() + 3].data() + addr_head.size();
  }
}

RankEnvironments::~RankEnvironments() {
  if (port_fd_ >= 0) ::close(port_fd_);
}

}  // namespace chorus::launch
