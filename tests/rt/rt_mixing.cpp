// rt_mixing: thousands of random asynchronous operations across every initialised backend,
// issued in one order agreed by all ranks (a shared seed), waited for in a random order that
// differs per rank, and every result checked against a local reference. Proves that the
// per-backend queues never deadlock each other and that waiting on one backend never
// blocks another. Start with `chorus launch -n 4 -- rt_mixing ...` or mpirun.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/split.h"
#include "core/rng.h"
#include "rt/runtime.h"
#include "rt_bench/selfcheck.h"

namespace rt_mixing_program {  // one of the programs of rt_programs.cpp

namespace rt = chorus::rt;
using chorus::CollectiveKind;
using chorus::kAllCollectiveKinds;
using chorus::rt::DType;
using chorus::rt::ReduceOp;

int run(int argc, char** argv) {
  CLI::App app{"rt_mixing: random asynchronous operations across backends"};
  std::string backends_arg = "shm,gloo";
  int ops = 3000, batch = 250;
  std::uint64_t seed = 20261122;
  std::size_t max_count = 3000;
  bool check = false;
  app.add_option("--backends", backends_arg, "comma-separated backends");
  app.add_option("--ops", ops, "number of operations");
  app.add_option("--batch", batch, "operations in flight before waiting");
  app.add_option("--seed", seed, "seed shared by all ranks");
  app.add_option("--max-count", max_count, "largest element count (a few ops use 40x this)");
  app.add_flag("--check", check, "enable the runtime's checking mode");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto backends = chorus::split_list(backends_arg);
    rt::InitOptions init;
    init.check = check ? 1 : 0;
    rt::init(backends, init);
    const int me = rt::rank(backends.front());
    chorus::Rng shared(seed);  // same stream on every rank
    chorus::Rng local(seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(me + 1)));  // wait order
    const auto t0 = std::chrono::steady_clock::now();
    std::int64_t failures = 0;
    std::size_t done = 0, waited_sync = 0;
    std::vector<std::size_t> per_backend(backends.size(), 0);
    while (done < static_cast<std::size_t>(ops)) {
      const std::size_t n =
          std::min<std::size_t>(static_cast<std::size_t>(batch), static_cast<std::size_t>(ops) - done);
      std::vector<std::unique_ptr<rt::selfcheck::Case>> cases;
      std::vector<rt::Work> works;
      for (std::size_t i = 0; i < n; ++i) {
        const auto bi = static_cast<std::size_t>(shared.uniform_int(0, static_cast<std::int64_t>(backends.size()) - 1));
        const CollectiveKind op = kAllCollectiveKinds[shared.uniform_int(0, std::size(kAllCollectiveKinds) - 1)];
        const DType d = rt::kAllDTypes[shared.uniform_int(0, std::size(rt::kAllDTypes) - 1)];
        const ReduceOp r = rt::kAllReduceOps[shared.uniform_int(0, std::size(rt::kAllReduceOps) - 1)];
        std::size_t count = static_cast<std::size_t>(shared.uniform_int(0, static_cast<std::int64_t>(max_count)));
        if (shared.uniform_int(0, 99) == 0) count *= 40;      // now and then a multi-round one
        const bool async_op = shared.uniform_int(0, 9) != 0;  // 10 % blocking calls in between
        cases.push_back(std::make_unique<rt::selfcheck::Case>(backends[bi], op, d, r, count, done + i));
        works.push_back(cases.back()->issue(async_op));
        ++per_backend[bi];
        if (!async_op) ++waited_sync;
      }
      std::vector<std::size_t> order(n);
      for (std::size_t i = 0; i < n; ++i) order[i] = i;
      for (std::size_t i = n; i > 1; --i)
        std::swap(order[i - 1],
                  order[static_cast<std::size_t>(local.uniform_int(0, static_cast<std::int64_t>(i) - 1))]);
      for (std::size_t k : order) {
        try {
          works[k].wait();
          const std::string err = cases[k]->verify();
          if (!err.empty()) {
            ++failures;
            std::fprintf(stderr, "FAIL %s: %s\n", cases[k]->describe().c_str(), err.c_str());
          }
        } catch (const std::exception& e) {
          ++failures;
          std::fprintf(stderr, "FAIL %s: threw %s\n", cases[k]->describe().c_str(), e.what());
        }
      }
      done += n;
    }
    rt::synchronize();
    std::int64_t total = 0;
    rt::all_reduce(backends.front(), &failures, &total, 1, DType::i64, ReduceOp::sum);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (me == 0) {
      std::printf("rt_mixing: %d ops (", ops);
      for (std::size_t b = 0; b < backends.size(); ++b)
        std::printf("%s%s %zu", b ? ", " : "", backends[b].c_str(), per_backend[b]);
      std::printf("; %zu blocking) on %d ranks, seed %llu, %.1f s: %lld failures\n", waited_sync,
                  rt::size(backends.front()), static_cast<unsigned long long>(seed), secs,
                  static_cast<long long>(total));
    }
    rt::finalize();
    return total == 0 ? 0 : 1;
  } catch (const chorus::InputError& e) {
    std::fprintf(stderr, "rt_mixing: error: %s\n", e.what());
    return chorus::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rt_mixing: failure: %s\n", e.what());
    return 1;
  }
}

}  // namespace rt_mixing_program
