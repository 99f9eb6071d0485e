#pragma once
// The launcher's first phases (launcher.h): the options checked, the CPUs the ranks run on, the
// descriptor limit the launcher's pipes need, the program's path and every rank's environment —
// all prepared before the first fork, after which a child makes only async-signal-safe calls.
#include <sys/resource.h>

#include <cstddef>
#include <string>
#include <vector>

#include "launch/launcher.h"

namespace chorus::launch {

// The record a rank reads from the start gate before exec: the store's port, NUL-padded.
inline constexpr std::size_t kGateRecord = 8;

// The job's run id (CHORUS_RUN_ID): "l<launcher pid>".
std::string job_run_id();

// Throws InputError on options out of range (ranks, program, grace, bind, stall timeout).
void validate_options(const LaunchOptions& options);

struct CpuPlan {
  std::vector<int> cpus;  // the CPUs the launcher may use
  bool bind = false;      // rank r is pinned to cpus[r % cpus.size()]
};
// The CPUs and whether to pin; refuses far more ranks than CPUs without `oversubscribe`, and
// says (unless noted) that ranks outnumber the CPUs.
CpuPlan plan_cpus(const LaunchOptions& options);

// Makes sure descriptors 0, 1 and 2 are open, so that no pipe of the launcher lands on them.
void ensure_std_fds();

// The soft limit on open descriptors, raised for the launcher's pipes (one or two per rank) if
// it is too low, and restored when this goes (the ranks get the original limit back).
class DescriptorLimit {
 public:
  explicit DescriptorLimit(const LaunchOptions& options);
  ~DescriptorLimit();
  DescriptorLimit(const DescriptorLimit&) = delete;
  DescriptorLimit& operator=(const DescriptorLimit&) = delete;
  bool raised() const { return raised_; }
  const rlimit& original() const { return original_; }

 private:
  rlimit original_{};
  bool raised_ = false;
};

// The program as execvp would find it, resolved before fork (execvp may allocate). A name that
// is not found is returned unchanged: execve then fails in the child and the rank reports it.
std::string resolve_program(const std::string& name);

// Whether `path` is a Python interpreter other than the one chorus's Python modules were built
// for (its ranks' import failures get a note naming both: import_failure_note).
bool runs_other_python(const std::string& path);
std::string import_failure_note(const LaunchOptions& options, const std::string& path);

// Every rank's environment: the launcher's, without the variables of an enclosing job, plus the
// rank's CHORUS_* variables, torch.distributed's (as torchrun sets them, unless the user has) and
// OMP_NUM_THREADS (CPUs / ranks, unless set), and `job_entries` (the beacon and dump
// directories: job_dumps.h). The store's port is not known before the forks: each child copies
// it into its `port_slot`, the NUL-filled tail of CHORUS_STORE_ADDR.
class RankEnvironments {
 public:
  RankEnvironments(const LaunchOptions& options, const CpuPlan& cpus, const std::string& token,
                   const std::vector<std::string>& job_entries);
  ~RankEnvironments();  // releases torch's MASTER_PORT, held until then
  RankEnvironments(const RankEnvironments&) = delete;
  RankEnvironments& operator=(const RankEnvironments&) = delete;
  char* const* envp(std::size_t rank) const { return envps_[rank].data(); }
  char* port_slot(std::size_t rank) const { return port_slots_[rank]; }

 private:
  std::vector<std::vector<std::string>> envs_;
  std::vector<std::vector<char*>> envps_;
  std::vector<char*> port_slots_;
  int port_fd_ = -1;
};

}  // namespace chorus::launch
