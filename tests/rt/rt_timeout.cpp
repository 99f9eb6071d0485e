// rt_timeout: the "late message" scenario of test_rt_timeouts.py. Rank 0 receives from rank 1,
// which sends only after rank 0's operation timeout has passed. Rank 0 must get a TimeoutError
// naming rank 1, then (with its receive buffer poisoned) see a later operation on the broken
// backend fail fast with the original failure, and its buffer stay untouched after rank 1's
// late send has certainly arrived. Then it frees the buffer and waits again (a write after that
// is a heap-use-after-free under AddressSanitizer).
//   rt_timeout --backend B --timeout-s T
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "rt/errors.h"
#include "rt/runtime.h"

namespace rt_timeout_program {  // one of the programs of rt_programs.cpp

namespace rt = chorus::rt;

int run(int argc, char** argv) {
  CLI::App app{"rt_timeout: a message that arrives after the receiver timed out"};
  std::string backend = "shm";
  double timeout_s = 1;
  // 512 floats = 2 KiB: below Open MPI's eager limit over shared memory (4 KiB), so the late
  // message lands in rank 0's receive queue without rank 0 taking part; fits shm's ring.
  std::size_t count = 512;
  // Rank 0 stays until t0 + max(T + 4.5 s, hold): when rank 1's late send can only end by its own
  // timeout (at t0 + 2T + 1.5 s), rank 0 must outlive it, or the launcher (mpirun) kills rank 1 as
  // soon as rank 0 exits and the send's error is never printed.
  double hold_s = 0;
  app.add_option("--backend", backend);
  app.add_option("--hold-s", hold_s, "rank 0 finalizes no earlier than this many seconds after the start");
  app.add_option("--timeout-s", timeout_s);
  app.add_option("--count", count);
  CLI11_PARSE(app, argc, argv);
  using clock = std::chrono::steady_clock;
  const auto ms = [](double s) { return std::chrono::milliseconds(static_cast<long long>(s * 1000)); };
  rt::InitOptions init;
  init.timeout_s = timeout_s;
  rt::init({backend}, init);
  const int me = rt::rank(backend);
  if (rt::size(backend) != 2) {
    std::fprintf(stderr, "rt_timeout needs 2 ranks\n");
    return 1;
  }
  rt::barrier(backend);
  const auto t0 = clock::now();
  if (me == 1) {
    // Send after rank 0's receive has timed out (it fails at t0 + T).
    std::this_thread::sleep_until(t0 + ms(timeout_s) + ms(1.5));
    std::vector<float> data(count, 42.0f);
    // Whether the send completes depends on the backend (shm's ring and Open MPI's eager
    // protocol take it without the receiver; Gloo waits for it): only its issue matters here.
    try {
      rt::send(backend, data.data(), count, rt::DType::f32, 0);
      std::printf("rank 1: sent late\n");
    } catch (const std::exception& e) {
      std::printf("rank 1: late send failed: %s\n", e.what());
    }
    std::fflush(stdout);
    std::this_thread::sleep_until(t0 + ms(timeout_s) + ms(5));
    rt::finalize();
    return 0;
  }
  auto* buf = new float[count];
  for (std::size_t i = 0; i < count; ++i) buf[i] = 0.0f;
  std::string original;
  try {
    rt::recv(backend, buf, count, rt::DType::f32, 1);
    std::printf("rank 0: recv returned without an error\n");
    return 1;
  } catch (const rt::TimeoutError& e) {
    original = e.what();
    std::printf("rank 0: timeout after %.2f s: %s\n", std::chrono::duration<double>(clock::now() - t0).count(),
                e.what());
  }
  // The buffer is the caller's again: poison it.
  std::memset(buf, 0x5A, count * sizeof(float));
  // An operation issued after the failure fails fast, naming the original failure.
  try {
    rt::Work w = rt::barrier(backend, /*async_op=*/true);
    w.wait();
    std::printf("rank 0: barrier on the broken backend succeeded\n");
    return 1;
  } catch (const rt::CommError& e) {
    const bool names = std::string(e.what()).find(original) != std::string::npos;
    std::printf("rank 0: fail-fast %s: %s\n", names ? "names the original failure" : "LOST the original failure",
                e.what());
  }
  // Rank 1 sends at t0 + T + 1.5 s: look again well after that.
  std::this_thread::sleep_until(t0 + ms(timeout_s) + ms(3.5));
  std::size_t changed = 0;
  for (std::size_t i = 0; i < count * sizeof(float); ++i)
    changed += reinterpret_cast<const unsigned char*>(buf)[i] != 0x5A;
  if (changed == 0)
    std::printf("rank 0: buffer untouched after the late send\n");
  else
    std::printf("rank 0: BUFFER WRITTEN after the timeout: %zu bytes changed\n", changed);
  delete[] buf;  // anything written from now on is a use after free (AddressSanitizer)
  std::this_thread::sleep_until(t0 + std::max(ms(timeout_s) + ms(4.5), ms(hold_s)));
  std::fflush(stdout);
  rt::finalize();
  std::printf("rank 0: finalized\n");
  std::fflush(stdout);
  return changed == 0 ? 0 : 1;
}

}  // namespace rt_timeout_program
