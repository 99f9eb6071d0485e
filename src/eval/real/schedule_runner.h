#pragma once
// `chorus run collective` / `chorus run schedule`: a Themis schedule made (or loaded) for a
// network, simulated, and executed on the ranks of this job (rt::ScheduleExecutor), the
// measured time beside the simulator's prediction and the result checked element by element.
#include <nlohmann/json.hpp>
#include <string>

namespace chorus::rt {

struct ScheduleRunOptions {
  std::string topology;       // preset or network YAML; or
  std::string grid;           // "2x4": a uniform emulated network (see docs/schedule-executor.md)
  std::string schedule_file;  // run this saved schedule instead of making one
  std::string op = "allreduce";
  std::string size = "64MiB";  // per rank, as in `chorus sim`
  int chunks = 16;
  std::string scheduler = "themis-scf";
  double threshold_divisor = 16;
  bool emulate = false;
  std::string dim_backends = "auto";
  int iters = 5;
  int warmup = 1;
  std::string dtype = "f32";
  std::string reduce = "sum";
  std::string trace;      // Chrome trace of the last iteration (rank 0)
  std::string sim_trace;  // the simulator's trace of the same schedule (rank 0)
  bool json = false;      // (front end) print JSON instead of a table
};

// Collective over the job; initialises and finalises the runtime. Returns the report on every
// rank (rank 0's is the one to print). InputError for bad options.
nlohmann::json run_schedule_on_ranks(const ScheduleRunOptions& options);

// The report as a short table.
std::string format_schedule_report(const nlohmann::json& report);

}  // namespace chorus::rt
