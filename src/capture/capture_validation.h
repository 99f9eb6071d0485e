#pragma once
// Capture validation (`chorus reproduce capture-validation`, docs/capture.md): how close is a
// simulated iteration of a captured program to the program's own step time on this host? Each
// program is captured (run_capture) several times on N ranks and a backend; per run, the
// reference is the program's step time when it is not recorded (the median of the capture's last
// steps, after the window, the host window and the steps that write their files), and the
// prediction is the window imported (workload/capture: the host window's operator times, the
// host's time between operators, the profiler's measured per-event cost taken off) and simulated on
// `--topology host` (host_network): rank 0's DAG with each stretch of compute between two
// collectives the slowest rank's (workload/capture), over the window's steps. A row is the median over runs of each column; its error is (predicted - measured) /
// measured of those medians.
#include <functional>
#include <string>
#include <vector>

namespace chorus::capture {

// A program of the study: a torch script and its arguments (without --steps, which the study sets).
struct ValidationProgram {
  std::string name;                // "moe"
  std::string script;              // relative to the source directory
  std::vector<std::string> args;   // the study's sizes
  std::vector<std::string> small;  // --small: the test's sizes
};

// examples/torch's DDP MLP, MoE and DLRM, and tests/data/capture/validation_program.py.
std::vector<ValidationProgram> validation_programs();

struct ValidationOptions {
  std::vector<std::string> programs;  // names; empty: all
  std::vector<int> ranks = {2};
  std::vector<std::string> backends = {"shm"};
  int runs = 3;
  bool small = false;
  // The window 3..5 (step 6 writes its files, step 7 waits for the slower rank's writing), the host
  // window 8..12 (step 13 writes its trace, step 14 waits); the reference: steps reference_from ..
  // steps - 1.
  int first_step = 3, last_step = 6, steps = 22, reference_from = 15;
  std::string out = "results/capture-validation";
  std::string source_dir;  // where the programs' scripts are; empty: this build's source directory
  std::string python = "/usr/bin/python3";
  std::string chorus_version;
  std::function<void(const std::string&)> progress;  // a line per run
};

// One capture of one program: the reference, the measured exposed communication and the prediction.
struct ValidationRun {
  std::string capture_dir;
  double measured_ms = 0;           // median over the reference steps of the ranks' mean step time
  double measured_exposed_ms = 0;   // a recorded step's time waiting for collectives (ranks' mean; the host
                                    // window's trace if there is one)
  double recorded_ms = 0;           // the recorded steps' mean (the capture's overhead is theirs)
  double predicted_ms = 0;          // the simulated window / its steps
  double predicted_compute_ms = 0;  // its compute a step
  double predicted_exposed_ms = 0;  // its exposed communication a step
};

struct ValidationRow {
  std::string program, backend;
  int ranks = 0;
  std::vector<ValidationRun> runs;
  // Medians over the runs; measured compute = measured - measured exposed communication.
  double measured_ms = 0, predicted_ms = 0, error_pct = 0;
  double measured_compute_ms = 0, measured_exposed_ms = 0;
  double predicted_compute_ms = 0, predicted_exposed_ms = 0;
  double recorded_ms = 0;
};

struct ValidationStudy {
  std::vector<ValidationRow> rows;
  double median_abs_error_pct = 0, worst_abs_error_pct = 0;
};

// InputError naming the option (programs, ranks, backends, runs) for bad options; the capture's
// own errors for a program that fails.
ValidationStudy run_capture_validation(const ValidationOptions& options);

// capture_validation.csv and capture_validation.json in options.out; their paths.
std::vector<std::string> write_capture_validation(const ValidationStudy& study, const std::string& out);

// The table `chorus reproduce capture-validation` prints, with the median and worst error.
std::string format_capture_validation(const ValidationStudy& study);

}  // namespace chorus::capture
