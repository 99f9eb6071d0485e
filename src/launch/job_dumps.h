#pragma once
// What the launcher does for a job that hangs or fails (docs/runtime.md, "When a job hangs or
// crawls"): every rank gets a beacon in a private temporary directory (CHORUS_RT_BEACON) and a
// directory for its flight record (CHORUS_RT_DUMP, unless the user set it: by default
// chorus-dumps/<UTC time>-<run id> under the current directory; set but empty, none). When the job stalls
// (--stall-timeout) or a rank fails, every living rank that has a beacon gets SIGUSR1 and up to
// kDumpWait to write `rank-R.json` (after a rank's failure, once the others have settled: each
// has written its own record, or sits in a call or in finalize without progress for kStill, or
// kSettle has passed; so that a rank between two calls is not asked before it reaches the call
// it will wait in); then the launcher writes `launcher.json` (each rank's
// process state, whether it dumped, its beacon), and once the job has ended runs the doctor on
// the directory. The beacons go with the job; an empty dump directory too.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "launch/launcher.h"
#include "launch/stall_watch.h"

namespace chorus::launch {

class JobDiagnostics {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kDumpWait{3};
  static constexpr std::chrono::milliseconds kSettle{1500}, kStill{200};

  // Makes the beacon directory (a failure is said, and turns this off) and chooses the dump
  // directory, made when the launcher first asks for flight records (a rank that dumps on its
  // own, as on an operation timeout, makes it itself).
  JobDiagnostics(const LaunchOptions& options, const std::string& run_id);
  ~JobDiagnostics();  // removes the beacons and an empty dump directory
  JobDiagnostics(const JobDiagnostics&) = delete;
  JobDiagnostics& operator=(const JobDiagnostics&) = delete;

  // CHORUS_RT_BEACON and CHORUS_RT_DUMP entries for every rank's environment.
  std::vector<std::string> environment() const;
  const std::string& dump_dir() const { return dump_dir_; }

  // The ranks' pids as spawned (-1 for none).
  void spawned(const std::vector<pid_t>& pids) { pids_ = pids; }
  // The supervisor's calls, in its loop: the beacons polled, true once the job has stalled.
  bool stalled(Clock::time_point now);
  // A rank reaped with `status` (its state in launcher.json).
  void reaped(std::size_t rank, int status);
  // Asks every living rank with a beacon (not starting, not finalized) that has not written its
  // flight record on its own (a rank that failed writes it) for it; false (nothing
  // asked) when no rank has a beacon or the dumps are off. `reason`: "stall" or "rank_failure".
  bool request(const std::string& reason, int failed_rank);
  // While true, the job is not stopped yet: the ranks asked are writing their records. Each call
  // checks: after a rank's failure it first signals the others once they have settled; once all
  // are in, or kDumpWait has passed, launcher.json is written.
  bool collecting(Clock::time_point now);
  // After the job: launcher.json if still due, then the doctor's diagnosis on stderr.
  void report();

 private:
  void write_launcher_record();
  bool dumped(std::size_t rank) const;       // rank-R.json written since the job started
  bool can_signal(std::size_t rank) const;   // its beacon says it has a SIGUSR1 handler
  void signal_ranks(Clock::time_point now);  // SIGUSR1 to every rank to ask; kDumpWait from now
  bool settled(Clock::time_point now);       // every living rank asked would dump where it will wait

  std::string run_id_, beacon_dir_, dump_dir_;
  bool dump_dir_ours_ = false;  // made by the launcher (removed if it stays empty)
  double stall_timeout_s_ = 0;
  std::optional<StallWatch> watch_;
  std::vector<pid_t> pids_;
  std::vector<std::optional<int>> statuses_;
  std::vector<bool> asked_;
  std::string reason_;
  int failed_rank_ = -1;
  bool requested_ = false, written_ = false;
  bool settling_ = false;  // a rank failed: the others not asked yet
  Clock::time_point deadline_{}, settle_until_{}, next_look_{};
  struct Seen {
    std::uint64_t started = 0, ended = 0;
    std::int64_t place = -1;
    Clock::time_point since{};
  };
  std::vector<Seen> seen_;  // per rank, its beacon as last read while settling
  std::time_t started_at_ = 0;
};

}  // namespace chorus::launch
