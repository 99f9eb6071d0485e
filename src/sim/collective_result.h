#pragma once
// What simulating one collective yields: time, the ideal bound, per-dimension metrics,
// the per-dimension execution order and (optionally) every chunk stage's timing.
#include <utility>
#include <vector>

#include "coll/collective.h"
#include "sched/schedule.h"

namespace chorus::sim {

struct DimMetrics {
  double bytes_per_npu = 0;  // bytes each NPU sent on this dimension
  double busy_ns = 0;        // time the dimension's bandwidth was in use
  double active_ns = 0;      // time at least one chunk was on the dimension (Fig. 9 "activity")
  double utilization = 0;    // bytes_per_npu / (aggregate bandwidth x collective time)
};

struct StageRecord {
  int chunk;
  int stage;  // index in the chunk's stage list
  coll::Phase phase;
  int dim;
  double arrive_ns;    // chunk reached the dimension
  double start_ns;     // bandwidth phase began (after the fixed delay and queueing)
  double end_ns;       // stage finished
  double bytes_sent;   // per NPU
  int collective = 0;  // which collective (in start order) when several run together
};

struct CollectiveResult {
  double time_ns = 0;
  double ideal_time_ns = 0;
  double avg_bw_utilization = 0;  // Sec. 3: ideal / actual for a single collective
  std::vector<DimMetrics> dims;
  std::vector<std::vector<sched::DimOp>> dim_order;  // Sec. 4.6.2 enforced order
  std::vector<StageRecord> stages;                   // filled when requested
  // Per dimension: maximal intervals [begin, end) with at least one chunk present.
  std::vector<std::vector<std::pair<double, double>>> active_intervals;
};

// Activity rate per window of `window_ns` (fraction 0..1 of the window with at least one
// chunk on the dimension), from time 0 to `end_ns` (Themis Fig. 9 uses 100 us windows).
std::vector<double> activity_rate(const std::vector<std::pair<double, double>>& intervals, double window_ns,
                                  double end_ns);

}  // namespace chorus::sim
