#pragma once
// Studies that run jobs of this very executable (`chorus launch -n N -- chorus run ...`, the
// launcher called as a function in this process) and read rank 0's JSON report from the ranks'
// captured stdout: `reproduce themis-real`, `reproduce syndicate-real`.
#include <nlohmann/json.hpp>
#include <string>

#include "eval/real/rank_programs.h"

namespace chorus::eval {

struct SelfJob {
  int ranks = 1;
  RankProgram program;
  // The study has said itself that its jobs have more ranks than CPUs (launch::LaunchOptions).
  bool oversubscription_noted = false;
};

// The path of the running executable; InputError naming `what` if /proc/self/exe is unreadable.
std::string self_exe(const std::string& what);

// The job as a command line a shell reads back (`chorus launch -n N -- chorus run ...`), for
// progress lines and errors.
std::string self_job_command(const SelfJob& job, const std::string& what);

// Runs the job and returns its JSON report, which must have `key`; InputError naming `what` and
// the command if the job fails or prints no such report. A SIGINT or SIGTERM while the job runs
// stops its ranks, then is raised again in this process (its handler then, the default: it ends).
nlohmann::json run_self_job(const SelfJob& job, const std::string& key, const std::string& what);

}  // namespace chorus::eval
