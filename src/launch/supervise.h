#pragma once
// The launcher's last phases (launcher.h): the ranks supervised until the last has exited — a
// failed rank or an interrupt stops the others (SIGTERM after the grace, SIGKILL 2 s later) —
// their output forwarded meanwhile, their statuses reaped into the launcher's; then the output
// the ranks left in their pipes forwarded.
#include <string>

#include "launch/spawn.h"

namespace chorus::launch {

// Waits for every rank of `job`, forwarding `output`; returns the job's status (launcher.h).
// `store_served`: false when the store did not start (the ranks were killed at the gate: a
// failure with nothing to report for them).
int supervise(const LaunchOptions& options, Job& job, JobOutput& output, const std::string& path, bool store_served);

// Forwards what the ranks' pipes still hold (bounded: a process the ranks left behind may hold
// one open), completes the last partial lines, and notes a Python import failure.
void finish_output(const LaunchOptions& options, JobOutput& output, const std::string& path);

}  // namespace chorus::launch
