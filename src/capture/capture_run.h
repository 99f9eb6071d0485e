#pragma once
// `chorus capture` (docs/capture.md): an unchanged torch program run on N ranks of this host under
// the launcher (launch::run_job), each rank as `python3 -m chorus.capture SCRIPT ARGS`
// (python/chorus/capture: hooks installed, the script run as __main__) on torch.distributed's
// chorus backend with the communication log on, recording for a window of steps the execution
// graph, the torch profiler's trace, the log and the step ends. The directory is written whole
// before its manifest.json, which comes last and says whether the capture is complete.
#include <string>
#include <vector>

namespace chorus::capture {

struct CaptureOptions {
  int ranks = 2;
  std::string out = "capture";
  int first_step = 3, last_step = 5;  // the window: steps first_step .. last_step - 1 (0-based)
  std::string backend = "shm";        // the chorus runtime backend: shm or gloo
  std::vector<std::string> command;   // python3 [interpreter options] SCRIPT ARGS, or python3 -m MODULE ARGS
  std::string chorus_version;         // for the manifest
  double kill_grace_s = 5.0;
  bool quiet = false;  // the ranks' standard output is dropped (a study running many captures)
};

// "A:B" (1 <= A < B) into the window; InputError naming `where`.
void parse_steps(const std::string& text, const std::string& where, int& first, int& last);

// Step times of the ranks' steps, in milliseconds: inside the window, and the unrecorded steps
// outside it (neither step 0, which holds the program's start, nor the steps from the window's end
// to the host window's (step_times.h): the writing of the files, the host window, the waits).
struct StepTimes {
  double inside_ms = 0, outside_ms = 0;  // means over every rank's steps; 0 when there are none
  int inside = 0, outside = 0;           // how many steps each mean is of
  double write_ms = 0;                   // the step after the window, mean over ranks (0 if none ran)
  int steps_ran = 0;                     // the fewest steps a rank ran
};

struct CaptureResult {
  bool complete = false;
  std::string error;  // why not, naming the rank and the file
  std::string manifest;
  StepTimes steps;
  int status = 0;  // the job's
};

// InputError for bad options (naming the flag's field: ranks, steps, backend, command, out).
CaptureResult run_capture(const CaptureOptions& options);

// The line `chorus capture` prints about the step times (the capture's overhead).
std::string overhead_line(const CaptureOptions& options, const StepTimes& t);

}  // namespace chorus::capture
