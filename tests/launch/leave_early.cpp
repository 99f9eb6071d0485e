// A rank program for the doctor's end-to-end test (test_doctor_e2e.py): a loop of ten
// all-reduces of 1,009 f32 on the backend named by argv[1]; rank 1 leaves the loop one step
// early and goes to finalize(), so rank 0 waits in its tenth (seq 9) until its operation timeout
// or until the launcher's stall watch asks the ranks for their flight records.
#include <cstdio>
#include <string>
#include <vector>

#include "rt/runtime.h"

int main(int argc, char** argv) {
  const std::string backend = argc > 1 ? argv[1] : "shm";
  chorus::rt::init({backend});
  const int me = chorus::rt::rank(backend);
  std::vector<float> x(1009, 1.0F);
  const int steps = me == 1 ? 9 : 10;
  for (int i = 0; i < steps; ++i)
    chorus::rt::all_reduce(backend, x.data(), x.data(), x.size(), chorus::rt::DType::f32, chorus::rt::ReduceOp::sum);
  chorus::rt::finalize();
  std::printf("rank %d done\n", me);
  return 0;
}
