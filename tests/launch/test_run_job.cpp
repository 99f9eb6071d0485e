// The launcher called as a function (launch/launcher.h), as the real studies call it: the ranks'
// standard output captured whole, the job's status, bad options refused before any fork, and
// several jobs one after the other in one process.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <string>

#include "core/error.h"
#include "launch/launcher.h"

namespace {

using chorus::launch::JobResult;
using chorus::launch::LaunchOptions;
using chorus::launch::run_job;

LaunchOptions shell_job(int ranks, const std::string& script) {
  LaunchOptions o;
  o.ranks = ranks;
  o.command = {"/bin/sh", "-c", script};
  o.kill_grace_s = 0;
  o.oversubscription_noted = true;
  o.capture_stdout = true;
  return o;
}

TEST(LaunchRunJob, CapturesEveryRanksStdout) {
  const JobResult r = run_job(shell_job(3, "echo rank $CHORUS_RANK of $CHORUS_WORLD_SIZE"));
  EXPECT_EQ(r.status, 0);
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_NE(r.output.find("rank " + std::to_string(rank) + " of 3\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.size(), 3 * std::string("rank 0 of 3\n").size()) << r.output;
}

TEST(LaunchRunJob, CapturesOutputAsWritten) {
  // No newline added to a last partial line, a long line not cut (the JSON reports).
  const std::string line(100000, 'x');
  const JobResult r = run_job(shell_job(1, "printf '{\"a\": 1}'; printf '%s' " + line));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.output, "{\"a\": 1}" + line);
}

TEST(LaunchRunJob, StatusOfAFailingRank) {
  // Rank 0 is stopped when rank 1 fails (no grace): what it printed, if anything, is kept.
  const JobResult r = run_job(shell_job(2, "if [ $CHORUS_RANK = 1 ]; then exit 3; fi; echo ok; sleep 30"));
  EXPECT_EQ(r.status, 3);
  EXPECT_TRUE(r.output.empty() || r.output == "ok\n") << r.output;
}

TEST(LaunchRunJob, StatusOfARankKilledByASignal) { EXPECT_EQ(run_job(shell_job(1, "kill -9 $$")).status, 128 + 9); }

TEST(LaunchRunJob, AnInterruptStopsTheJobAndIsReported) {
  // Rank 0 interrupts the launcher (this process) while both ranks sleep: the ranks are stopped,
  // the status is 128 + SIGINT, and the caller learns which signal it was.
  const auto t0 = std::chrono::steady_clock::now();
  const JobResult r = run_job(shell_job(2, "if [ $CHORUS_RANK = 0 ]; then kill -INT $PPID; fi; sleep 30"));
  EXPECT_EQ(r.status, 128 + SIGINT);
  EXPECT_EQ(r.interrupted, SIGINT);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

TEST(LaunchRunJob, BadOptionsAreInputErrors) {
  LaunchOptions none = shell_job(0, "true");
  EXPECT_THROW(run_job(none), chorus::InputError);
  LaunchOptions no_program = shell_job(1, "true");
  no_program.command.clear();
  EXPECT_THROW(run_job(no_program), chorus::InputError);
  LaunchOptions bad_bind = shell_job(1, "true");
  bad_bind.bind = "sometimes";
  EXPECT_THROW(run_job(bad_bind), chorus::InputError);
}

TEST(LaunchRunJob, JobsOneAfterAnotherInOneProcess) {
  // Each job has its own store (a new port, a new token) and run id.
  const std::string script = "echo $CHORUS_STORE_ADDR $CHORUS_STORE_TOKEN";
  const JobResult first = run_job(shell_job(1, script)), second = run_job(shell_job(1, script));
  EXPECT_EQ(first.status, 0);
  EXPECT_EQ(second.status, 0);
  EXPECT_EQ(first.output.rfind("127.0.0.1:", 0), 0u) << first.output;
  EXPECT_NE(first.output, second.output);
}

TEST(LaunchRunJob, WithoutCaptureNothingIsCaptured) {
  LaunchOptions o = shell_job(1, "true");
  o.capture_stdout = false;
  const JobResult r = run_job(o);
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(r.output.empty());
}

}  // namespace
