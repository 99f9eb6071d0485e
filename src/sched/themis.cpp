#include "sched/themis.h"

#include <algorithm>
#include <numeric>

#include "sched/baseline.h"
#include "sched/latency_model.h"

namespace chorus::sched {
namespace {

// SCHEDULER.SCHEDULE of Algorithm 1 (lines 17-32) for one chunk and one phase.
class ThemisScheduler {
 public:
  ThemisScheduler(const net::Network& network, const ThemisOptions& options)
      : network_(network), model_(network), options_(options) {}

  // DimLoadTracker.reset(CT) (line 2): each dimension starts at its fixed delay A_K.
  void reset(coll::Phase phase) { tracker_.reset(model_.fixed_delays_ns(phase)); }

  std::vector<int> schedule(coll::Phase phase, double chunk_bytes) {
    const auto& loads = tracker_.loads();  // line 18
    const auto [min_it, max_it] = std::minmax_element(loads.begin(), loads.end());
    const int least_loaded = static_cast<int>(min_it - loads.begin());
    const double threshold = model_.stage_load_ns(least_loaded, phase, chunk_bytes / options_.threshold_divisor);
    std::vector<int> order;
    if (*max_it - *min_it < threshold) {                   // line 19
      order = baseline_order(phase, network_.num_dims());  // line 20
    } else {
      order.resize(loads.size());
      std::iota(order.begin(), order.end(), 0);
      // Lines 22-26: indices sorted by load, ascending for RS, descending for AG. The paper
      // leaves ties open; here equal loads keep the lower dimension first in both phases
      // (stable sort of 0..D-1), so every NPU agrees. For RS that is the baseline order; for
      // AG it is the reverse of the baseline AG order (which runs the highest dimension first).
      if (phase == coll::Phase::kAllGather) {
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return loads[a] > loads[b]; });
      } else {
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return loads[a] < loads[b]; });
      }
    }
    tracker_.update(model_.calc_loads(chunk_bytes, order, phase));  // lines 28-30
    return order;
  }

 private:
  const net::Network& network_;
  LatencyModel model_;
  DimLoadTracker tracker_;
  ThemisOptions options_;
};

}  // namespace

Schedule themis_schedule(const net::Network& network, CollectiveKind op, double size_bytes, int num_chunks,
                         const ThemisOptions& options) {
  // Start from the baseline schedule: all-to-all keeps it; the other operations get every
  // chunk's order from Algorithm 1.
  Schedule s = baseline_schedule(network, op, size_bytes, num_chunks);
  s.scheduler = options.policy == IntraDimPolicy::kFifo ? "themis-fifo" : "themis-scf";
  s.policy = options.policy;
  if (op == CollectiveKind::kAllToAll) return s;
  s.chunks.clear();
  ThemisScheduler scheduler(network, options);
  // For an all-reduce the tracker follows the reduce-scatter half (line 7); the all-gather
  // half mirrors it (line 8) and so adds the same load to every dimension again.
  const coll::Phase phase = op == CollectiveKind::kAllGather ? coll::Phase::kAllGather : coll::Phase::kReduceScatter;
  scheduler.reset(phase);
  const double chunk_bytes = size_bytes / num_chunks;  // line 3
  for (int i = 0; i < num_chunks; ++i) {
    std::vector<int> rs, ag;
    if (op == CollectiveKind::kAllReduce) {
      rs = scheduler.schedule(coll::Phase::kReduceScatter, chunk_bytes);
      ag.assign(rs.rbegin(), rs.rend());
    } else if (op == CollectiveKind::kReduceScatter) {
      rs = scheduler.schedule(coll::Phase::kReduceScatter, chunk_bytes);
    } else {
      ag = scheduler.schedule(coll::Phase::kAllGather, chunk_bytes);
    }
    s.chunks.push_back(ChunkSchedule{chunk_stages(op, rs, ag)});
  }
  return s;
}

}  // namespace chorus::sched
