#pragma once
// `chorus sim jobs`'s options and its run without the output: what the command prints with --json
// and what `chorus sweep` records for each point are the same JSON.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/jobs/job_mix.h"
#include "sim/jobs/time_shift.h"

namespace chorus::cli {

struct SimJobsArgs {
  std::string jobs;
  std::string fabric;  // overrides the file's
  std::string out;
  bool plot = false;
  bool json = false;
  double batch_tolerance = 0;
  double link_window_ms = 1;  // links_over_time.csv's window (with --out)
  bool search_shifts = false;
  sim::jobs::ShiftSearchOptions shifts;
};

struct SimJobsOutcome {
  sim::jobs::JobMix mix;
  sim::jobs::JobMixResult result;
  std::optional<sim::jobs::ShiftSearchResult> shifts;  // with search_shifts
  nlohmann::json json;                                 // the --json object
};

// Checks the options, loads the job mix and its fabric, simulates the jobs together and alone
// (and searches start shifts); InputError names the flag or file at fault.
SimJobsOutcome simulate_jobs(const SimJobsArgs& a);

}  // namespace chorus::cli
