// What the flight recorder (rt/diagnostics/flight_recorder.h) adds to one operation:
//   bench_flight_recorder [ITERATIONS]
// an entry begun and ended in a lane's ring, with the rank's beacon counting, against the same
// calls on a ring of capacity 0 (the recorder off: begin() returns at once); one thread, as a lane.
//   chorus launch -n 2 -- bench_flight_recorder --job [ROUNDS] [ITERATIONS]
// blocking all-reduces on shm and gloo in one job through two runtimes of each rank, one
// recording and one not (InitOptions::record_entries 0), alternated round by round on the same
// processes and CPUs; per backend and size the median over the rounds of the mean per call.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "rt/diagnostics/flight_recorder.h"
#include "rt/runtime_instance.h"

namespace {

using chorus::rt::FlightLayer;
using chorus::rt::FlightRing;

double ns_per_operation(FlightRing& ring, long iterations) {
  float x[1024] = {};
  const chorus::rt::Call call =
      chorus::rt::calls::all_reduce(x, x, 1024, chorus::rt::DType::f32, chorus::rt::ReduceOp::sum);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < iterations; ++i) ring.end(ring.begin(call, 0, false, FlightLayer::kApi), true);
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
         static_cast<double>(iterations);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Mean microseconds per blocking all-reduce of `bytes` on `backend` over `iterations` calls.
double us_per_call(chorus::rt::Runtime& rt, const std::string& backend, std::vector<float>& x, long iterations) {
  using namespace chorus::rt;
  rt.issue(backend, calls::barrier(), false);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < iterations; ++i)
    rt.issue(backend, calls::all_reduce(x.data(), x.data(), x.size(), DType::f32, ReduceOp::sum), false);
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
              static_cast<double>(iterations);
  // Every rank reports the slowest rank's time (the call ends when the last rank is done).
  rt.issue(backend, calls::all_reduce(&us, &us, 1, DType::f64, ReduceOp::max), false);
  return us;
}

int job_main(int rounds, long iterations) {
  using namespace chorus::rt;
  InitOptions off;
  off.record_entries = 0;
  Runtime on_rt({"shm", "gloo"}, InitOptions{}), off_rt({"shm", "gloo"}, off);
  const bool print = on_rt.rank("shm") == 0;
  if (print)
    std::printf(
        "# flight recorder on (256 entries per lane) vs off (record_entries 0), two runtimes of each rank "
        "in one job, alternated; %d ranks, f32 sum all-reduce, blocking; median of %d rounds of the mean "
        "per call\n| backend | bytes | recorder on (us) | off (us) | on - off (us) | on / off |\n"
        "| --- | --- | --- | --- | --- | --- |\n",
        on_rt.size("shm"), rounds);
  for (const std::string backend : {"gloo", "shm"})
    for (const std::size_t bytes : {std::size_t{8}, std::size_t{4096}, std::size_t{65536}}) {
      std::vector<float> x(bytes / sizeof(float), 1.0f);
      const long n = backend == "gloo" ? iterations / 20 : iterations;
      us_per_call(on_rt, backend, x, n / 10);  // warm-up
      us_per_call(off_rt, backend, x, n / 10);
      std::vector<double> on, off_times;
      for (int r = 0; r < rounds; ++r) {
        if (r % 2 == 0) {
          on.push_back(us_per_call(on_rt, backend, x, n));
          off_times.push_back(us_per_call(off_rt, backend, x, n));
        } else {
          off_times.push_back(us_per_call(off_rt, backend, x, n));
          on.push_back(us_per_call(on_rt, backend, x, n));
        }
      }
      const double a = median(on), b = median(off_times);
      if (print) std::printf("| %s | %zu | %.3f | %.3f | %+.3f | %.3f |\n", backend.c_str(), bytes, a, b, a - b, a / b);
    }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "--job")
    return job_main(argc > 2 ? std::atoi(argv[2]) : 9, argc > 3 ? std::atol(argv[3]) : 20000);
  const long iterations = argc > 1 ? std::atol(argv[1]) : 20'000'000;
  const auto dir = std::filesystem::temp_directory_path() / ("chorus-bench-beacon-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    chorus::rt::Beacon beacon(dir.string(), 0);
    bool shared = false;
    FlightRing on(256, beacon.slot(&shared), shared), off(0, nullptr, false);
    double best_on = 1e9, best_off = 1e9;
    for (int round = 0; round < 5; ++round) {  // alternated; the best of each
      best_on = std::min(best_on, ns_per_operation(on, iterations / 5));
      best_off = std::min(best_off, ns_per_operation(off, iterations / 5));
    }
    std::printf(
        "# flight recorder: one operation's entry begun and ended (ring of 256, beacon counting), "
        "best of 5 alternated rounds of %ld\n",
        iterations / 5);
    std::printf("recorder_on_ns %.2f\nrecorder_off_ns %.2f\nentry_bytes %zu\nlane_bytes %zu\n", best_on, best_off,
                sizeof(chorus::rt::FlightEntry), sizeof(chorus::rt::FlightEntry) * on.capacity());
  }
  std::filesystem::remove_all(dir);
  return 0;
}
