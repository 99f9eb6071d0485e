#pragma once
// `chorus launch`: starts N ranks of a program on this host, serves their rendezvous store on
// loopback, and propagates failure — when one rank fails, the others get `kill_grace_s` to
// notice and report it themselves, then are terminated; the launcher exits non-zero.
#include <string>
#include <vector>

namespace chorus::rt {

struct LaunchOptions {
  int ranks = 1;
  std::vector<std::string> command;  // program and its arguments
  double kill_grace_s = 5.0;
  // "core": rank r runs on the r-th CPU the launcher may use; "none": the kernel decides;
  // "auto": "core" when ranks <= CPUs, else "none" (Open MPI's default). Pinning keeps each
  // rank's caches warm, which matters for the shm backend.
  std::string bind = "auto";
};

// Returns the exit status for the launcher: 0 if every rank exited 0, else the first failing
// rank's status (128 + signal for a rank killed by a signal). Throws InputError on bad options.
int launch(const LaunchOptions& options);

}  // namespace chorus::rt
