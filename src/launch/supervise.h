#pragma once
// The launcher's last phases (launcher.h): the ranks supervised until the last has exited — a
// failed rank or an interrupt stops the others (SIGTERM after the grace, SIGKILL 2 s later) —
// their output forwarded meanwhile, their statuses reaped into the launcher's; then the output
// the ranks left in their pipes forwarded.
#include <string>

#include "launch/job_dumps.h"
#include "launch/spawn.h"

namespace chorus::launch {

// The status of a job stopped because it stalled (--stall-timeout), as timeout(1)'s.
inline constexpr int kStalledStatus = 124;

// Waits for every rank of `job`, forwarding `output`; returns the job's status (launcher.h).
// `store_served`: false when the store did not start (the ranks were killed at the gate: a
// failure with nothing to report for them). `diagnostics` (may be null) watches for a stall and
// collects the ranks' flight records when the job stalls or a rank fails, before the others are
// stopped.
int supervise(const LaunchOptions& options, Job& job, JobOutput& output, const std::string& path, bool store_served,
              JobDiagnostics* diagnostics);

// Forwards what the ranks' pipes still hold (bounded: a process the ranks left behind may hold
// one open), completes the last partial lines, and notes a Python import failure.
void finish_output(const LaunchOptions& options, JobOutput& output, const std::string& path);

}  // namespace chorus::launch
