// Ten lines of chorus::rt: an asynchronous all-reduce on shm overlapping a blocking
// all-to-all on gloo. Run: chorus launch -n 4 -- ./rt_hello   or   mpirun -n 4 ./rt_hello
#include <cstdio>
#include <vector>

#include "rt/runtime.h"
using namespace chorus::rt;

// The README shows these ten lines as they are.
// clang-format off
int main() {
  init({"shm", "gloo"});
  std::vector<float> grad(1 << 20, float(rank("shm") + 1)), tokens(4 * size("gloo"), float(rank("gloo"))), routed(tokens.size());
  Work w = all_reduce("shm", grad.data(), grad.data(), grad.size(), DType::f32, ReduceOp::avg, /*async_op=*/true);
  all_to_all_single("gloo", tokens.data(), routed.data(), 4, DType::f32);  // blocking, while the all-reduce runs
  w.wait();
  std::printf("rank %d of %d: mean grad %g, token from the last rank: %g\n", rank("shm"), size("shm"), grad[0], routed.back());
  finalize();
}
// clang-format on
