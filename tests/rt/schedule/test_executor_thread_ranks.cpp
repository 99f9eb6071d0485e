// The schedule executor (rt/schedule) with ranks as threads of one process
// (../backends/thread_ranks.h), each rank's grid and executor on its own Runtime: Themis and
// baseline schedules of all-reduce, reduce-scatter, all-gather and all-to-all on grids of 1-4
// ranks (1, 2, 3, 2x2), on shm, gloo and a dimension of each, every element checked against a
// reference computed here. Inputs are small integers (exact in f32): rank r's element i is
// (r + 1) + i % 5; all-to-all: a2a(r, i), and element i of rank m must be a2a(i / B, m * B + i % B)
// with B = count / ranks (block i / B came from that rank, where it was block m).
#include <gtest/gtest.h>

#include <cstddef>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <string>
#include <vector>

#include "rt/schedule/grid.h"
#include "rt/schedule/schedule_executor.h"
#include "sched/scheduler.h"
#include "sim/run_collective.h"
#include "thread_ranks.h"

namespace chorus::rt {
namespace {

float input(int r, std::size_t i) { return static_cast<float>(r + 1) + static_cast<float>(i % 5); }
float a2a(int r, std::size_t i) { return static_cast<float>((static_cast<std::size_t>(r) * 31 + i * 3) % 113); }

struct Case {
  std::vector<int> dims;
  std::vector<std::string> backends;  // one, or one per dimension
};

class ExecutorThreadRanks : public ::testing::TestWithParam<Case> {};

// The network the schedules are made for: dimension d at 400 / 2^d Gb/s, so that Themis orders
// the chunks' dimensions differently.
net::Network network_of(const std::vector<int>& dims) {
  net::Network net;
  net.name = "threads";
  for (std::size_t d = 0; d < dims.size(); ++d) {
    net::Dimension dim;
    dim.size = dims[d];
    dim.link_bandwidth_gbps = 400.0 / static_cast<double>(1 << d);
    dim.latency_ns = 500;
    net.dims.push_back(dim);
  }
  return net;
}

TEST_P(ExecutorThreadRanks, EveryElementOfEverySchedule) {
  const auto [dims, backends] = GetParam();
  int n = 1;
  for (int p : dims) n *= p;
  std::vector<std::string> initialised;
  for (const auto& b : backends)
    if (std::find(initialised.begin(), initialised.end(), b) == initialised.end()) initialised.push_back(b);
  const net::Network net = network_of(dims);
  testing::spawn(n, initialised, [&](Runtime& runtime, int me) {
    const RankGrid grid = make_rank_grid(runtime, dims, backends);
    for (const char* scheduler : {"baseline", "themis-scf"})
      for (int chunks : {1, 3})
        for (CollectiveKind op : {CollectiveKind::kAllReduce, CollectiveKind::kReduceScatter,
                                  CollectiveKind::kAllGather, CollectiveKind::kAllToAll}) {
          const std::size_t unit = static_cast<std::size_t>(chunks * n);
          // An all-reduce's count that chunks x ranks does not divide runs a flat tail as well.
          const std::size_t count = op == CollectiveKind::kAllReduce ? unit * 13 + 3 : unit * 11;
          auto schedule =
              sched::make_schedule(net, op, static_cast<double>(count * 4), chunks, sched::parse_scheduler(scheduler));
          schedule = sim::run_schedule(net, std::move(schedule)).schedule;  // fills dim_order
          ExecutorOptions eo;
          eo.network = &net;
          eo.tail_backend = backends.front();
          ScheduleExecutor ex(grid, schedule, eo);
          const bool gather = op == CollectiveKind::kAllGather, all_to_all = op == CollectiveKind::kAllToAll;
          const std::size_t block = count / static_cast<std::size_t>(n);
          std::vector<float> buf(count);
          for (std::size_t i = 0; i < count; ++i) buf[i] = gather ? -1.0f : all_to_all ? a2a(me, i) : input(me, i);
          if (gather)
            for (const auto& [b, e] : ex.piece_ranges(count))
              for (std::size_t i = b; i < e; ++i) buf[i] = static_cast<float>(i % 101);
          ex.run(buf.data(), count);
          for (const auto& [b, e] : ex.owned_ranges(count))
            for (std::size_t i = b; i < e; ++i) {
              float want = 0;
              if (gather) {
                want = static_cast<float>(i % 101);
              } else if (all_to_all) {
                want = a2a(static_cast<int>(i / block), static_cast<std::size_t>(me) * block + i % block);
              } else {
                for (int r = 0; r < n; ++r) want += input(r, i);
              }
              if (buf[i] != want)
                throw std::runtime_error(fmt::format("rank {}, {} {} in {} chunks: element {} is {}, expected {}", me,
                                                     scheduler, to_string(op), chunks, i, buf[i], want));
            }
        }
  });
}

INSTANTIATE_TEST_SUITE_P(Grids, ExecutorThreadRanks,
                         ::testing::Values(Case{{1}, {"shm"}}, Case{{2}, {"gloo"}}, Case{{3}, {"shm"}},
                                           Case{{2, 2}, {"shm"}}, Case{{2, 2}, {"gloo"}},
                                           Case{{2, 2}, {"shm", "gloo"}}),
                         [](const auto& p) {
                           return fmt::format("{}_{}", fmt::join(p.param.dims, "x"), fmt::join(p.param.backends, "_"));
                         });

}  // namespace
}  // namespace chorus::rt
