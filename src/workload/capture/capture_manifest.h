#pragma once
// A `chorus capture` directory (docs/capture.md): `manifest.json`, written last by `chorus capture`,
// names per rank the files the capture recorded — the execution graph, the torch profiler trace,
// the communication log and the rank's record (`rank.<r>.json`: its step ends and the window on the
// host's monotonic clock, the groups it created) — and the step window. Read here with every field
// checked; errors name the file and the field (exit 2).
#include <cstdint>
#include <string>
#include <vector>

namespace chorus::workload::capture {

struct RankFiles {
  int rank = 0;
  std::string graph, trace, comm_log, record;  // paths (the manifest's names joined to the directory)
  // The host window's trace (the profiler alone, steps B+1 .. 2B-A; optional: "" when the program
  // did not run them).
  std::string host_trace;
};

struct Manifest {
  std::string dir, path;  // the directory and its manifest.json
  bool complete = false;
  int world = 0;
  int first_step = 0, last_step = 0;  // the window: steps first_step .. last_step - 1
  std::string backend;                // the chorus runtime backend the program ran on
  std::vector<RankFiles> ranks;       // by rank, 0 .. world - 1
};

// A process group the rank created (torch.distributed.new_group): the label the chorus backend
// logs its operations under, and its members' world ranks.
struct Group {
  std::string label;
  std::vector<int> ranks;
};

// rank.<r>.json: what the rank's hooks wrote at its exit.
struct RankRecord {
  int rank = 0;
  bool ok = false;  // read_rank_record refuses a record whose program failed
  std::string error;
  std::vector<std::int64_t> step_end_ns;  // every step's end, host monotonic clock
  std::int64_t window_start_ns = 0, window_end_ns = 0;
  int first_step = 0, last_step = 0;
  std::vector<Group> groups;
  // The recording's measured cost per profiler event on this rank (`profiler_overhead.us_per_event`,
  // python/chorus/capture's calibrate: tiny operators timed plain and recorded); 0 if the record
  // has none (a capture made before chorus measured it).
  double overhead_us_per_event = 0;
  double profiler_us_per_event = 0;  // the same for the profiler alone (the host window's trace)
  // The host window's steps C .. D-1 (profiler alone); 0, 0 in a record without one.
  int host_first_step = 0, host_last_step = 0;
};

// True if `spec` is a directory holding manifest.json.
bool is_capture_dir(const std::string& spec);

// InputError naming DIR/manifest.json and the field: not JSON (truncated), missing or mistyped
// fields, ranks not 0 .. world - 1, a window that is empty; `complete: false` (a capture whose
// program failed or did not run the window), naming what the manifest says went wrong; and a
// rank's file that is missing, naming the rank and the file.
Manifest read_manifest(const std::string& dir);

// InputError naming the file, the rank and the field: the program failed on the rank (`ok`), it ran
// fewer steps than the window's end, it recorded no window, malformed fields.
RankRecord read_rank_record(const RankFiles& files);

}  // namespace chorus::workload::capture
