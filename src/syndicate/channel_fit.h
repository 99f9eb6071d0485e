#pragma once
// A channel's latency and bandwidth fitted to measured operation times (`chorus tune
// --topology-out`): the step model of cost_model.h is linear in the latency alpha and the time
// per byte beta = 8 / B, t = c_alpha(kind, g, bytes) alpha + c_beta(kind, g, bytes) beta, so the
// two are a least-squares fit over every measured (operation, size). Errors are relative (each
// sample weighted by 1 / t), so that a 1 KiB and a 16 MiB measurement count alike.
#include <vector>

#include "syndicate/cost_model.h"

namespace chorus::syndicate {

// One measurement: an operation of `kind` over `group` ranks, `bytes` as step_time_ns takes
// them (all_reduce, broadcast: per rank; reduce_scatter, all_gather: the whole buffer;
// all_to_all: per destination, with group - 1 destinations besides itself).
struct TimedOp {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  int group = 2;
  double bytes = 0;
  double time_ns = 0;
};

struct ChannelFit {
  double latency_ns = 0;
  double bandwidth_gbps = 0;
  double rms_relative_error = 0;  // of the fitted model over the samples
  double max_relative_error = 0;
  int samples = 0;
};

// Least squares with alpha, beta >= 0 (a negative one is fixed at 0 and the other refitted).
// InputError when fewer than two samples of distinct sizes, or a time is not > 0.
ChannelFit fit_channel(const std::vector<TimedOp>& samples);

}  // namespace chorus::syndicate
