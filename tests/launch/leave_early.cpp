// The rank programs of the doctor's end-to-end tests (test_doctor_e2e.py, test_faults_e2e.py): a
// loop of ten all-reduces on the backend named by argv[1], faults put in on purpose by rank 1.
//   leave_early BACKEND [leave] rank 1 leaves the loop one step early and goes to finalize(), so
//                              rank 0 waits in its tenth (seq 9) until its operation timeout or
//                              until the launcher's stall watch asks the ranks for their records;
//   leave_early BACKEND late   every rank does all ten, rank 1 sleeping 50 ms before each (a
//                              straggler); each rank writes its flight record before finalize();
//   leave_early BACKEND differ rank 1's fifth call (seq 4) is a broadcast from rank 0 instead;
//   leave_early BACKEND skip   step i all-reduces 1000 + i floats (each step's call differs from
//                              the next) and rank 1 skips step 4 and goes on: at seq 4 rank 0
//                              calls x1004, rank 1 x1005;
//   leave_early BACKEND skipsame as skip, but every step's all-reduce is alike (1,009 f32) and
//                              each rank marks each step's end (rt::mark_step): at seq 4 both
//                              call the same, and rank 0 waits in seq 9 while rank 1, ten steps
//                              done, is in finalize; only the steps tell that it skipped one;
//   leave_early BACKEND kill   rank 1 kills itself (SIGKILL) before step 4, 0.3 s after step 3:
//                              rank 0 waits in seq 4;
//   leave_early BACKEND stop   rank 1 stops itself (SIGSTOP) before step 4: rank 0 waits in seq 4
//                              (continued, rank 1 sleeps until it is ended).
// Every other loop is of 1,009 f32.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "rt/runtime.h"

int main(int argc, char** argv) {
  const std::string backend = argc > 1 ? argv[1] : "shm";
  const std::string mode = argc > 2 ? argv[2] : "";
  const bool late = mode == "late";
  constexpr int kFaultStep = 4;
  chorus::rt::init({backend});
  const int me = chorus::rt::rank(backend);
  std::vector<float> x(1009, 1.0F);
  const int steps = me == 1 && (mode.empty() || mode == "leave") ? 9 : 10;
  for (int i = 0; i < steps; ++i) {
    if (me == 1 && i == kFaultStep) {
      if (mode == "kill") {
        // Killed between calls: its peer first finishes the call they shared. A SIGKILL resets a
        // TCP connection that still holds unread bytes, which can fail the peer's last gloo
        // receive before it read what was already sent (the doctor then rightly names that call,
        // seq 3); the pause keeps this test on the fault it is about.
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        ::raise(SIGKILL);
      }
      if (mode == "stop") {
        ::raise(SIGSTOP);
        // Continued (mpirun sends SIGCONT before the SIGTERM that ends a job): it stays out of
        // chorus until it is ended, so that its record, if any, is of where it was stopped.
        for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
      }
      if (mode == "skip") continue;
      if (mode == "skipsame") {
        chorus::rt::mark_step();
        continue;
      }
    }
    if (late && me == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::size_t count = mode == "skip" ? 1000 + static_cast<std::size_t>(i) : x.size();
    if (mode == "differ" && me == 1 && i == kFaultStep)
      chorus::rt::broadcast(backend, x.data(), x.size(), chorus::rt::DType::f32, 0);
    else
      chorus::rt::all_reduce(backend, x.data(), x.data(), count, chorus::rt::DType::f32, chorus::rt::ReduceOp::sum);
    if (mode == "skipsame") chorus::rt::mark_step();
  }
  if (late) chorus::rt::dump_flight_record();
  chorus::rt::finalize();
  std::printf("rank %d done\n", me);
  return 0;
}
