// rt_check: multi-process correctness test of chorus::rt. Every rank runs every requested
// operation on every requested backend, dtype, reduce op and size, with inputs every rank can
// regenerate locally, and compares each result with a reference computed locally.
// Start it with `chorus launch -n N -- rt_check ...` or `mpirun -n N rt_check ...`.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/split.h"
#include "rt/dtype.h"
#include "rt/runtime.h"
#include "rt_bench/selfcheck.h"

namespace rt_check_program {  // one of the programs of rt_programs.cpp

namespace rt = chorus::rt;
using chorus::CollectiveKind;
using chorus::kAllCollectiveKinds;
using chorus::rt::DType;
using chorus::rt::ReduceOp;
using chorus::rt::selfcheck::Checker;

int run(int argc, char** argv) {
  CLI::App app{"rt_check: multi-process correctness test of chorus::rt"};
  std::string backends_arg = "shm", ops_arg = "all", dtypes_arg = "all", sizes_arg = "0,1,7,29,100,1031,300007";
  std::size_t big_bytes = 0;
  bool quiet = false, reinit = false;
  app.add_option("--backends", backends_arg, "comma-separated backends");
  app.add_option("--ops", ops_arg, "comma-separated operations or 'all'");
  app.add_option("--dtypes", dtypes_arg, "comma-separated dtypes or 'all'");
  app.add_option("--sizes", sizes_arg, "comma-separated element counts");
  app.add_option("--big-bytes", big_bytes, "also run all_reduce f32 sum and all_gather of this many bytes");
  app.add_flag("--quiet", quiet, "print only failures and the summary");
  app.add_flag("--reinit", reinit, "finish with a second init/finalize cycle");
  CLI11_PARSE(app, argc, argv);

  try {
    const auto backends = chorus::split_list(backends_arg);
    rt::init(backends);
    std::vector<CollectiveKind> ops;
    if (ops_arg == "all")
      ops.assign(std::begin(kAllCollectiveKinds), std::end(kAllCollectiveKinds));
    else
      for (const auto& o : chorus::split_list(ops_arg)) ops.push_back(rt::parse_op_kind(o, "--ops"));
    std::vector<DType> dtypes;
    if (dtypes_arg == "all")
      dtypes.assign(std::begin(rt::kAllDTypes), std::end(rt::kAllDTypes));
    else
      for (const auto& d : chorus::split_list(dtypes_arg)) dtypes.push_back(rt::parse_dtype(d, "--dtypes"));
    std::vector<std::size_t> sizes;
    for (const auto& s : chorus::split_list(sizes_arg)) sizes.push_back(std::stoull(s));

    Checker checker;
    for (const auto& b : backends) {
      for (CollectiveKind op : ops) {
        if (op == CollectiveKind::kRecv) continue;  // tested together with send
        for (DType d : dtypes)
          for (std::size_t n : sizes) {
            if (rt::selfcheck::is_reduction(op)) {
              for (ReduceOp r : rt::kAllReduceOps) checker.run(b, op, d, r, n);
            } else {
              checker.run(b, op, d, ReduceOp::sum, n);
            }
          }
      }
      if (std::find(ops.begin(), ops.end(), CollectiveKind::kSend) != ops.end()) {
        // Both ranks of each pair send 8 MiB to each other asynchronously before receiving.
        rt::selfcheck::Case c(b, CollectiveKind::kSend, DType::f32, ReduceOp::sum, 2 << 20, 99);
        std::string err;
        try {
          c.issue(true).wait();
          err = c.verify();
        } catch (const std::exception& e) {
          err = e.what();
        }
        checker.record(c.describe() + " (async exchange)", err);
      }
      if (big_bytes > 0) {
        checker.run(b, CollectiveKind::kAllReduce, DType::f32, ReduceOp::sum, big_bytes / 4);
        checker.run(b, CollectiveKind::kAllGather, DType::u8, ReduceOp::sum, big_bytes / rt::size(b));
      }
    }
    // Agree on the outcome (on the first backend, which passed its own checks or not).
    std::int64_t failures = checker.failures(), total = 0;
    rt::all_reduce(backends.front(), &failures, &total, 1, DType::i64, ReduceOp::sum);
    if (rt::rank(backends.front()) == 0)
      std::printf("rt_check: %zu checks per rank on %s, world size %d: %lld failures\n", checker.checks(),
                  backends_arg.c_str(), rt::size(backends.front()), static_cast<long long>(total));
    rt::finalize();
    if (reinit) {
      // A second init/finalize cycle in the same processes must work too. It ends with
      // operations still in flight (issued async, never waited for): finalize() lets them run to
      // their end, so their results are right, and leaves the runtime healthy, so a third cycle
      // has every backend again (mpi included: a backend given up as stuck makes MPI unusable).
      rt::init(backends);
      Checker again;
      for (const auto& b : backends) again.run(b, CollectiveKind::kAllReduce, DType::f32, ReduceOp::sum, 1031);
      std::vector<std::unique_ptr<rt::selfcheck::Case>> in_flight;
      std::vector<rt::Work> works;
      for (const auto& b : backends)
        for (std::uint64_t k = 0; k < 4; ++k) {  // the first long enough to be running at finalize()
          in_flight.push_back(std::make_unique<rt::selfcheck::Case>(
              b, CollectiveKind::kAllReduce, DType::f32, ReduceOp::sum, k == 0 ? std::size_t{1} << 21 : 1031, 40 + k));
          works.push_back(in_flight.back()->issue(true));
        }
      rt::finalize();
      for (std::size_t i = 0; i < works.size(); ++i) {
        std::string err;
        try {
          err = works[i].wait_for(std::chrono::milliseconds(0)) ? in_flight[i]->verify()
                                                                : "not complete after finalize()";
        } catch (const std::exception& e) {
          err = e.what();
        }
        again.record(in_flight[i]->describe() + " (in flight at finalize)", err);
      }
      rt::init(backends);
      for (const auto& b : backends) again.run(b, CollectiveKind::kAllReduce, DType::f32, ReduceOp::sum, 1031);
      rt::finalize();
      total += again.failures();
    }
    return total == 0 ? 0 : 1;
  } catch (const chorus::InputError& e) {
    std::fprintf(stderr, "rt_check: error: %s\n", e.what());
    return chorus::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rt_check: failure: %s\n", e.what());
    return 1;
  }
}

}  // namespace rt_check_program
