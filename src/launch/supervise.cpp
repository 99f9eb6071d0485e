#include "launch/supervise.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <thread>

namespace chorus::launch {

namespace {

using Clock = std::chrono::steady_clock;

std::string status_text(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "ended";
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// Polls the ranks' open streams for up to `timeout_ms` and forwards what arrived; then prints
// the merged lines whose window has passed. Returns the number of streams that had something.
int pump_streams(JobOutput& output, int timeout_ms) {
  auto& streams = output.streams;
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
  output.merged.flush(MergedLines::Clock::now(), false);
  return ready;
}

// The wait loop's state: which ranks are alive, whether the job is failing, and when the
// others are stopped.
class Supervisor {
 public:
  Supervisor(const LaunchOptions& options, Job& job, JobOutput& output, const std::string& path, bool store_served,
             JobDiagnostics* diagnostics)
      : options_(options),
        job_(job),
        output_(output),
        path_(path),
        quiet_failure_(!store_served),
        diagnostics_(store_served ? diagnostics : nullptr) {
    for (pid_t p : job_.pids) alive_ += p > 0 ? 1 : 0;
    if (!store_served) {
      result_ = 1;
      failing_ = true;
      term_at_ = Clock::now();
    }
  }

  int run() {
    while (alive_ > 0) {
      int status = 0;
      const pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid > 0) {
        report_exec_errors();
        reaped(pid, status);
        continue;
      }
      if (InterruptGuard::caught() != 0 && !failing_) {
        failing_ = true;
        result_ = 128 + InterruptGuard::caught();
        term_at_ = Clock::now();
      }
      if (diagnostics_ != nullptr && !failing_ && diagnostics_->stalled(Clock::now())) stalled();
      escalate(Clock::now());
      pump_streams(output_, 5);
    }
    // Processes the ranks started and left behind in the job's group go with a failed job, and
    // are gone when the launcher returns (a SIGKILL is delivered at once, the death follows).
    if (failing_ && job_.pgid > 0) {
      ::kill(-job_.pgid, SIGKILL);
      wait_for_group_gone(std::chrono::seconds(2));
    }
    report_exec_errors();
    ::close(job_.exec_errors);
    job_.exec_errors = -1;
    return result_;
  }

 private:
  void reaped(pid_t pid, int status) {
    for (std::size_t r = 0; r < job_.pids.size(); ++r) {
      if (job_.pids[r] != pid) continue;
      job_.pids[r] = -1;
      --alive_;
      for (auto& s : output_.streams)
        if (s.rank == static_cast<int>(r)) s.drain();
      if (diagnostics_ != nullptr) diagnostics_->reaped(r, status);
      const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      if (!ok && !termed_ && !quiet_failure_) failed(r, pid, status);
    }
  }

  void failed(std::size_t r, pid_t pid, int status) {
    output_.merged.note(fmt::format("chorus launch: rank {} (pid {}) {}", r, pid, status_text(status)), Clock::now());
    // A rank killed by a signal (before the launcher stops anyone) is the likely cause of a
    // failure: its peers see it die and exit with an error, and one of them may be reaped
    // first. So a signal death takes over the status from a plain error exit.
    if (failing_ && WIFSIGNALED(status) && !result_from_signal_) {
      result_ = exit_code(status);
      result_from_signal_ = true;
    }
    if (failing_) return;
    failing_ = true;
    result_ = exit_code(status);
    result_from_signal_ = WIFSIGNALED(status);
    if (result_ == 0) result_ = 1;
    term_at_ = Clock::now() + std::chrono::milliseconds(static_cast<long>(options_.kill_grace_s * 1000));
    if (alive_ > 0 && diagnostics_ != nullptr && diagnostics_->request("rank_failure", static_cast<int>(r)))
      output_.merged.note("chorus launch: asking the other ranks for their flight records (SIGUSR1)", Clock::now());
    if (alive_ > 0)
      output_.merged.note(
          fmt::format("chorus launch: stopping the other ranks (after {:.1f} s grace)", options_.kill_grace_s),
          Clock::now());
  }

  // No operation started or ended for --stall-timeout while ranks wait: the ranks are asked for
  // their flight records, then stopped.
  void stalled() {
    failing_ = true;
    result_ = kStalledStatus;
    term_at_ = Clock::now();
    output_.merged.note(fmt::format("chorus launch: the job stalled: no rank started or ended an operation for {:g} s "
                                    "while ranks waited in a call or in finalize; asking the ranks for their flight "
                                    "records (SIGUSR1), then stopping the job",
                                    options_.stall_timeout_s),
                        Clock::now());
    diagnostics_->request("stall", -1);
  }

  // SIGTERM to the job once the grace has passed (and the ranks asked for their flight records
  // have written them), SIGKILL 2 s later.
  void escalate(Clock::time_point now) {
    const bool collecting = diagnostics_ != nullptr && diagnostics_->collecting(now);
    if (failing_ && !termed_ && now >= term_at_ && !collecting) {
      signal_job(SIGTERM);
      termed_ = true;
      kill_at_ = now + std::chrono::seconds(2);
    }
    if (termed_ && now >= kill_at_) {
      signal_job(SIGKILL);
      kill_at_ = now + std::chrono::hours(1);
    }
  }

  // Until no process of the job's group is left, or `bound` has passed. Those the ranks left
  // behind are the launcher's children (a subreaper, spawn.cpp): reaped here.
  void wait_for_group_gone(std::chrono::milliseconds bound) const {
    const auto until = Clock::now() + bound;
    while (Clock::now() < until) {
      while (::waitpid(-1, nullptr, WNOHANG) > 0) {
      }
      if (::kill(-job_.pgid, 0) != 0 && errno == ESRCH) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  void signal_job(int sig) {
    if (job_.pgid > 0) ::kill(-job_.pgid, sig);
    for (pid_t p : job_.pids)
      if (p > 0) ::kill(p, sig);  // in case one had not joined the group
  }

  void report_exec_errors() {
    ExecError e{};
    while (::read(job_.exec_errors, &e, sizeof e) == static_cast<ssize_t>(sizeof e))
      std::fprintf(stderr, "chorus launch: rank %d cannot execute '%s': %s\n", e.rank, path_.c_str(),
                   std::strerror(e.error));
  }

  const LaunchOptions& options_;
  Job& job_;
  JobOutput& output_;
  const std::string& path_;
  const bool quiet_failure_;           // the ranks were killed at the gate: nothing to report
  JobDiagnostics* const diagnostics_;  // null: no beacons, no flight records
  std::size_t alive_ = 0;
  int result_ = 0;
  bool failing_ = false;
  bool result_from_signal_ = false;  // `result_` is that of a rank killed by a signal
  bool termed_ = false;
  Clock::time_point term_at_{}, kill_at_{};
};

}  // namespace

int supervise(const LaunchOptions& options, Job& job, JobOutput& output, const std::string& path, bool store_served,
              JobDiagnostics* diagnostics) {
  return Supervisor(options, job, output, path, store_served, diagnostics).run();
}

void finish_output(const LaunchOptions& options, JobOutput& output, const std::string& path) {
  const auto drain_until = Clock::now() + std::chrono::seconds(2);
  while (Clock::now() < drain_until && pump_streams(output, 0) > 0) {
  }
  for (auto& s : output.streams) {
    if (s.fd < 0) continue;
    s.forward(true);
    ::close(s.fd);
    s.fd = -1;
  }
  output.merged.flush(Clock::now(), true);
  if (output.import_failure) std::fputs(import_failure_note(options, path).c_str(), stderr);
}

}  // namespace chorus::launch
