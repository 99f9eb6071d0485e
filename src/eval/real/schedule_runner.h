#pragma once
// `chorus run collective` / `chorus run schedule`: a Themis schedule made (or loaded) for a
// network, simulated, and executed on the ranks of this job (rt::ScheduleExecutor), the
// measured time beside the simulator's prediction and the result checked element by element.
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace chorus::eval {

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
};

// One dimension of the executed schedule: its groups' size and backend, what each rank sent on
// it and how long it was busy (slowest rank), beside the simulator's prediction.
struct ScheduleDimRow {
  std::size_t dim = 0;  // 1-based
  int size = 0;         // ranks in each of its groups
  std::string backend;
  std::string backend_chosen_by;                      // "given", "tuning table" or "default (<why>)"
  std::map<std::string, double> backend_estimate_us;  // per backend with a complete estimate
  double bytes_per_rank = 0;
  double busy_ns = 0;  // slowest rank
  int stages = 0;
  double predicted_bytes_per_rank = 0, predicted_busy_ns = 0;
};

struct ScheduleReport {
  int rank = 0;  // the rank that wrote this report
  std::string network;
  std::string grid;  // "2x4"
  int ranks = 0;
  std::string op;  // compact name: allreduce, reducescatter, allgather, alltoall
  double size_bytes = 0;
  int chunks = 0;
  std::string scheduler;
  std::string dtype, reduce;
  bool emulate = false;
  int iters = 0;
  double time_ns = 0;            // median over the iterations of the slowest rank's time
  std::vector<double> times_ns;  // every measured iteration's
  double predicted_time_ns = 0;
  double ratio = 0;               // time_ns / predicted_time_ns
  std::string check;              // "passed", or the first wrong element
  std::size_t tail_elements = 0;  // elements outside the schedule: an all-reduce's flat tail
  std::vector<ScheduleDimRow> dims;
};

// Collective over the job; initialises and finalises the runtime. Returns the report on every
// rank (rank 0's is the one to print). InputError for bad options.
ScheduleReport run_schedule_on_ranks(const ScheduleRunOptions& options);

// What `chorus run collective --json` prints: one object with a key per ScheduleReport field
// ("dims": one object per ScheduleDimRow, "backend_estimate_us" an object per backend).
nlohmann::json to_json(const ScheduleReport& report);

// The report as a short table.
std::string format_schedule_report(const ScheduleReport& report);

}  // namespace chorus::eval
