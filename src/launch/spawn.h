#pragma once
// The launcher's spawn phase (launcher.h): the ranks forked, each into the job's process group,
// with its output pipes, and held at the start gate until the store serves. Runs before the
// launcher starts any thread; between fork and exec a child makes only async-signal-safe calls.
#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "launch/job_plan.h"
#include "launch/rank_output.h"

namespace chorus::launch {

// SIGINT and SIGTERM caught while the job runs (the launcher then stops the ranks), the
// previous handlers restored when this goes; the ranks get the previous ones back before exec.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  // The signal caught since this guard was made, 0 if none.
  static int caught();
  const struct sigaction& old_int() const { return old_int_; }
  const struct sigaction& old_term() const { return old_term_; }

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

// Where the ranks' output goes: their stderr (and with --tag-output their stdout) through a
// stream each, identical stderr lines merged; stdout captured with capture_stdout.
struct JobOutput {
  MergedLines merged{2};
  std::vector<RankStream> streams;
  bool import_failure = false;  // a rank running another Python failed to import a module
  std::string captured;         // the ranks' stdout, with capture_stdout
};

// The ranks as spawned: their pids (-1 for none), the job's process group, the start gate.
struct Job {
  std::vector<pid_t> pids;
  pid_t pgid = 0;  // 0 while no rank was forked
  bool fork_failed = false;
  int gate_read = -1, gate_write = -1;  // the start gate: one kGateRecord per rank opens it
  int exec_errors = -1;                 // read end (non-blocking): ExecError records
};

// What a child writes to the exec-error pipe when execve fails.
struct ExecError {
  std::int32_t rank;
  std::int32_t error;
};

// Everything spawn_ranks needs, prepared by the earlier phases.
struct SpawnPlan {
  const LaunchOptions& options;
  const CpuPlan& cpus;
  const std::string& path;  // the resolved program
  const RankEnvironments& envs;
  const DescriptorLimit& nofile;
  const InterruptGuard& interrupts;
  bool other_python = false;  // ranks run a Python other than chorus's (runs_other_python)
};

// Forks the ranks in order; stops at the first that cannot be forked (fork_failed, said on
// stderr). Each rank's streams are added to `output`. The children wait at the gate.
Job spawn_ranks(const SpawnPlan& plan, JobOutput& output);

// Opens the gate with the store's port, or (no store: port 0) kills the waiting ranks, which
// have not exec'd yet; closes both ends.
void open_gate(Job& job, int store_port, std::size_t ranks);

}  // namespace chorus::launch
