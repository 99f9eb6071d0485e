// What the flight recorder (rt/diagnostics/flight_recorder.h) adds to one operation: an entry
// begun and ended in a lane's ring, with the rank's beacon counting, against the same calls on a
// ring of capacity 0 (CHORUS_RT_RECORD=0: begin() returns at once). One thread, as a lane.
//   bench_flight_recorder [ITERATIONS]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "rt/diagnostics/flight_recorder.h"

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

}  // namespace

int main(int argc, char** argv) {
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
