// rt_fail: a program that misbehaves on purpose, for the failure tests (test_rt_failures.py).
//   --mode kill      the victim rank kills itself (SIGKILL) before an all_reduce
//   --mode stall     the victim rank never joins the all_reduce
//   --mode mismatch  the victim passes a different count (checking mode is on)
//   --mode late-finalize  the victim reaches finalize 2.5 s after the others
//   --mode no-finalize    the victim never finalizes (it exits 15 s later, past the deadline)
//   --mode fused-kill     the victim kills itself (SIGKILL) after making a tensor fusion with the
//                         others, who then submit fused all-reduces and wait for them
//   --mode abort     the victim enters the all_reduce at once, the others 2 s later; 0.5 s in,
//                    another thread of the victim calls rt::abort
// Every other rank must end with a clear error, which it prints with the time it took.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "core/error.h"
#include "rt/fusion/fusion.h"
#include "rt/runtime.h"

namespace rt_fail_program {  // one of the programs of rt_programs.cpp

namespace rt = chorus::rt;

int run(int argc, char** argv) {
  CLI::App app{"rt_fail: failure injection for the runtime tests"};
  std::string backend = "shm", mode = "kill";
  int victim = 1;
  std::size_t count = 1 << 20;
  app.add_option("--backend", backend);
  app.add_option("--mode", mode)
      ->check(CLI::IsMember({"kill", "stall", "mismatch", "late-finalize", "no-finalize", "fused-kill", "abort"}));
  app.add_option("--victim", victim);
  app.add_option("--count", count);
  CLI11_PARSE(app, argc, argv);
  int me = -1;
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  struct Joined {
    std::thread thread;
    ~Joined() {
      if (thread.joinable()) thread.join();
    }
  } aborter;
  try {
    rt::InitOptions init;
    init.check = mode == "mismatch" ? 1 : 0;
    rt::init({backend}, init);
    me = rt::rank(backend);
    std::vector<float> x(count, 1.0f), y(count + 1, 0.0f);
    for (int i = 0; i < 3; ++i) rt::all_reduce(backend, x.data(), y.data(), count, rt::DType::f32, rt::ReduceOp::sum);
    if (mode == "fused-kill") {
      rt::Fusion fusion({backend});
      if (me == victim) ::raise(SIGKILL);
      std::vector<std::vector<float>> grads(10, std::vector<float>(256, 1.0f));
      std::vector<rt::Work> works;
      for (auto& g : grads)
        works.push_back(fusion.all_reduce(backend, g.data(), g.data(), g.size(), rt::DType::f32, rt::ReduceOp::sum));
      for (auto& w : works) w.wait();
      std::printf("rank %d: no error after %.2f s\n", me, seconds());
      std::fflush(stdout);
    }
    if (me == victim) {
      if (mode == "kill") ::raise(SIGKILL);
      if (mode == "stall") {
        std::this_thread::sleep_for(std::chrono::seconds(60));
        ::_exit(0);
      }
    }
    if (mode == "abort" && me == victim)
      aborter.thread = std::thread([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        rt::abort("gave up on purpose");
      });
    else if (mode == "abort")
      std::this_thread::sleep_for(std::chrono::seconds(2));
    const std::size_t n = mode == "mismatch" && me == victim ? count + 1 : count;
    rt::all_reduce(backend, x.data(), y.data(), n, rt::DType::f32, rt::ReduceOp::sum);
    std::printf("rank %d: no error after %.2f s\n", me, seconds());
    std::fflush(stdout);
    if (me == victim && mode == "late-finalize") std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    if (me == victim && mode == "no-finalize") {
      std::this_thread::sleep_for(std::chrono::seconds(15));
      ::_exit(0);
    }
    rt::finalize();
    std::printf("rank %d: finalized after %.2f s\n", me, seconds());
    return 0;
  } catch (const chorus::InputError& e) {
    std::fprintf(stderr, "rank %d: input error after %.2f s: %s\n", me, seconds(), e.what());
    std::fflush(stderr);
    rt::finalize();  // the ranks agreed on the error: an orderly shutdown must work
    return chorus::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: communication error after %.2f s: %s\n", me, seconds(), e.what());
    std::fflush(stderr);
    rt::finalize();  // must not hang or crash on the broken backend
    std::fprintf(stderr, "rank %d: finalized after the error\n", me);
    return 3;
  }
}

}  // namespace rt_fail_program
