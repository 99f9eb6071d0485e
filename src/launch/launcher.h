#pragma once
// `chorus launch`: starts N ranks of a program on this host, serves their rendezvous store on
// loopback, and propagates failure — when one rank fails, the others get `kill_grace_s` to
// notice and report it themselves, then are terminated; the launcher exits non-zero.
//
// Nothing of the job outlives the launcher and nothing of the launcher leaks into the ranks:
// - ranks are forked before the launcher starts any thread (the store's serving thread starts
//   after the last fork; a pipe hands the store's port to the waiting children), and between
//   fork and exec a child makes only async-signal-safe calls;
// - each rank asks the kernel for SIGKILL when the launcher dies (PR_SET_PDEATHSIG, checked
//   against the launcher's pid to close the race with an early death), so ranks die with a
//   SIGKILLed launcher; the signal follows the thread that forked, which is the thread that
//   calls launch() and blocks in it until the job has ended;
// - the ranks form one process group of their own (the job's), which the launcher signals on
//   failure or interrupt, reaching processes the ranks started too;
// - every descriptor the launcher opens is close-on-exec, and a rank starts with only 0, 1, 2
//   (anything else the launcher inherited is closed in the child, as mpirun does).
//
// A job's phases, each in the file named for it: the options checked, the ranks' CPUs, the
// descriptor limit and every rank's environment planned (job_plan.h); the ranks forked and
// held at the start gate (spawn.h); the store started and the gate opened (launcher.cpp); the
// ranks supervised, their output forwarded, their statuses reaped (supervise.h), the ranks'
// beacons watched and their flight records collected when the job stalls or a rank fails
// (job_dumps.h, stall_watch.h).
#include <string>
#include <vector>

namespace chorus::launch {

struct LaunchOptions {
  int ranks = 1;
  std::vector<std::string> command;  // program and its arguments
  double kill_grace_s = 5.0;
  // "core": rank r runs on the r-th CPU the launcher may use; "none": the kernel decides;
  // "auto": "core" when ranks <= CPUs, else "none" (Open MPI's default). Pinning keeps each
  // rank's caches warm, which matters for the shm backend.
  std::string bind = "auto";
  // Prefix every line a rank writes with "[<rank>]<stdout>: " or "[<rank>]<stderr>: ".
  // Off: a rank's stdout is the launcher's; its stderr lines get "[<rank>] ", and identical
  // lines of several ranks are printed once ("[0-3] ..."; rank_output.h).
  bool tag_output = false;
  // Start more than max(64, 16 x CPUs) ranks (refused otherwise: usually a typo).
  bool oversubscribe = false;
  // The caller has said itself that its jobs have more ranks than CPUs (the studies, which run
  // many jobs): the launcher does not say it again for this job.
  bool oversubscription_noted = false;
  // The ranks' standard output goes, as they wrote it, to JobResult::output instead of the
  // launcher's standard output (a program that runs jobs and reads their reports; it overrides
  // tag_output for stdout). Their stderr is forwarded as always.
  bool capture_stdout = false;
  // Seconds without any rank starting or ending an operation, while at least one waits in a call
  // or in finalize, after which the job counts as stalled: the ranks are asked for their flight
  // records, the doctor's diagnosis is printed, the job is stopped (status 124). 0: off (a wait
  // in a collective while a peer computes for minutes is legitimate). job_dumps.h.
  double stall_timeout_s = 0;
};

// What a job ended with.
struct JobResult {
  int status = 0;       // as launch() returns it
  std::string output;   // the ranks' standard output, with LaunchOptions::capture_stdout
  int interrupted = 0;  // the signal (SIGINT, SIGTERM) that stopped the job, 0 if none
};

// The CPUs this process may run on (its affinity mask).
int usable_cpus();

// `word` as a POSIX shell reads it back: as it is when plain, else single-quoted (for the
// commands the launcher's messages show).
std::string shell_word(const std::string& word);

// Runs one job to its end. Its status: 0 if every rank exited 0, else the first failing rank's
// status (128 + signal for a rank killed by a signal) — except that a rank killed by a signal
// before the launcher stops the others takes precedence over ranks that exited with an error
// (they usually exit because of it, and may be reaped first); 128 + signal when the launcher is
// interrupted (SIGINT, SIGTERM). Throws InputError on bad options, CommError when the
// rendezvous store cannot start. A stalled job (stall_timeout_s) has status 124.
JobResult run_job(const LaunchOptions& options);

// run_job's status: the exit status for `chorus launch`.
int launch(const LaunchOptions& options);

}  // namespace chorus::launch
