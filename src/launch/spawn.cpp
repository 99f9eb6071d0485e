#include "launch/spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>

#include "core/error.h"

namespace chorus::launch {

namespace {

volatile sig_atomic_t g_interrupted = 0;
void on_interrupt(int sig) { g_interrupted = sig; }

void pipe_cloexec(int fds[2], const char* what) {
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw InputError("launch", fmt::format("cannot create the {} pipe: {}", what, std::strerror(errno)));
}

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
  int out_write = -1, err_write = -1;  // the rank's stdout (tagged or captured) and stderr pipes
  bool bind = false;
  cpu_set_t cpu{};
  bool restore_nofile = false;
  rlimit nofile{};
  struct sigaction old_int {
  }, old_term{};
};

// Waits at the gate until the store serves (the launcher writes one record per rank) and copies
// the port into the rank's environment.
void pass_gate(const ChildPlan& p) {
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
}

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
  pass_gate(p);
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

ChildPlan child_plan(const SpawnPlan& s, const Job& job, char* const* argv) {
  ChildPlan plan;
  plan.launcher = ::getpid();
  plan.path = s.path.c_str();
  plan.argv = argv;
  plan.gate_read = job.gate_read;
  plan.bind = s.cpus.bind;
  plan.restore_nofile = s.nofile.raised();
  plan.nofile = s.nofile.original();
  plan.old_int = s.interrupts.old_int();
  plan.old_term = s.interrupts.old_term();
  return plan;
}

// The rank's read ends as streams of the job's output.
void add_streams(const SpawnPlan& s, int rank, int out_read, int err_read, JobOutput& output) {
  bool* import_failure = s.other_python ? &output.import_failure : nullptr;
  if (s.options.capture_stdout)
    output.streams.push_back({out_read, rank, 1, {}, nullptr, {}, nullptr, &output.captured});
  else if (s.options.tag_output)
    output.streams.push_back({out_read, rank, 1, fmt::format("[{}]<stdout>: ", rank), nullptr, {}});
  if (s.options.tag_output)
    output.streams.push_back({err_read, rank, 2, fmt::format("[{}]<stderr>: ", rank), nullptr, {}, import_failure});
  else
    output.streams.push_back({err_read, rank, 2, {}, &output.merged, {}, import_failure});
}

}  // namespace

InterruptGuard::InterruptGuard() {
  g_interrupted = 0;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

int InterruptGuard::caught() { return g_interrupted; }

Job spawn_ranks(const SpawnPlan& s, JobOutput& output) {
  const auto ranks = static_cast<std::size_t>(s.options.ranks);
  const bool stdout_pipe = s.options.tag_output || s.options.capture_stdout;
  Job job;
  job.pids.assign(ranks, -1);
  int gate[2], exec_errors[2];
  pipe_cloexec(gate, "start gate");
  pipe_cloexec(exec_errors, "exec status");
  ::fcntl(exec_errors[0], F_SETFL, O_NONBLOCK);
  job.gate_read = gate[0];
  job.gate_write = gate[1];
  job.exec_errors = exec_errors[0];
  std::vector<char*> argv;
  for (const auto& a : s.options.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ChildPlan plan = child_plan(s, job, argv.data());
  plan.error_write = exec_errors[1];
  output.streams.reserve(2 * ranks);
  // What the ranks leave behind when they exit (a shell's background process) is re-parented to
  // the launcher rather than to init, so the launcher can reap it once it has killed the job.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  std::fflush(stdout);
  std::fflush(stderr);
  for (std::size_t r = 0; r < ranks; ++r) {
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    if ((stdout_pipe && ::pipe2(out, O_CLOEXEC) != 0) || ::pipe2(err, O_CLOEXEC) != 0) {
      std::fprintf(stderr, "chorus launch: cannot create the output pipes of rank %zu: %s\n", r, std::strerror(errno));
      for (int fd : {out[0], out[1]})
        if (fd >= 0) ::close(fd);
      job.fork_failed = true;
      break;
    }
    plan.pgid = job.pgid;
    plan.envp = s.envs.envp(r);
    plan.port_slot = s.envs.port_slot(r);
    plan.out_write = out[1];
    plan.err_write = err[1];
    if (plan.bind) {
      CPU_ZERO(&plan.cpu);
      CPU_SET(s.cpus.cpus[r % s.cpus.cpus.size()], &plan.cpu);
    }
    const pid_t pid = ::fork();
    if (pid == 0) run_child(plan, static_cast<int>(r));
    if (pid < 0) {
      std::fprintf(stderr, "chorus launch: fork failed for rank %zu: %s\n", r, std::strerror(errno));
      job.fork_failed = true;
    } else {
      if (job.pgid == 0) job.pgid = pid;
      ::setpgid(pid, job.pgid);  // also here, so the group exists whichever process runs first
      job.pids[r] = pid;
    }
    for (int fd : {out[1], err[1]})
      if (fd >= 0) ::close(fd);
    if (pid > 0) {
      add_streams(s, static_cast<int>(r), out[0], err[0], output);
    } else {
      for (int fd : {out[0], err[0]})
        if (fd >= 0) ::close(fd);
    }
    if (job.fork_failed) break;
  }
  ::close(exec_errors[1]);
  return job;
}

void open_gate(Job& job, int store_port, std::size_t ranks) {
  if (store_port > 0) {
    char record[kGateRecord] = {};
    const std::string port = std::to_string(store_port);
    std::memcpy(record, port.data(), port.size());
    for (std::size_t r = 0; r < ranks; ++r) write_all_fd(job.gate_write, record, kGateRecord);
  } else if (job.pgid > 0) {
    ::kill(-job.pgid, SIGKILL);  // no rank has exec'd yet: nothing to report for them
  }
  ::close(job.gate_write);
  ::close(job.gate_read);
  job.gate_write = job.gate_read = -1;
}

}  // namespace chorus::launch
