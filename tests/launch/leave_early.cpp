// The rank programs of the doctor's end-to-end test (test_doctor_e2e.py): a loop of ten
// all-reduces of 1,009 f32 on the backend named by argv[1].
//   leave_early BACKEND        rank 1 leaves the loop one step early and goes to finalize(), so
//                              rank 0 waits in its tenth (seq 9) until its operation timeout or
//                              until the launcher's stall watch asks the ranks for their records;
//   leave_early BACKEND late   every rank does all ten, rank 1 sleeping 50 ms before each (a
//                              straggler); each rank writes its flight record before finalize();
//   leave_early BACKEND differ rank 1's fifth call (seq 4) is a broadcast from rank 0 instead.
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
  chorus::rt::init({backend});
  const int me = chorus::rt::rank(backend);
  std::vector<float> x(1009, 1.0F);
  const int steps = me == 1 && !late ? 9 : 10;
  for (int i = 0; i < steps; ++i) {
    if (late && me == 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (mode == "differ" && me == 1 && i == 4)
      chorus::rt::broadcast(backend, x.data(), x.size(), chorus::rt::DType::f32, 0);
    else
      chorus::rt::all_reduce(backend, x.data(), x.data(), x.size(), chorus::rt::DType::f32, chorus::rt::ReduceOp::sum);
  }
  if (late) chorus::rt::dump_flight_record();
  chorus::rt::finalize();
  std::printf("rank %d done\n", me);
  return 0;
}
