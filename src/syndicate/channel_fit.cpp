// A channel fitted to measured operation times (channel_fit.h).
#include "syndicate/channel_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/error.h"

namespace chorus::syndicate {

namespace {

int peers(const TimedOp& s) { return s.group - 1; }

// The model's coefficients of alpha and of beta (ns per byte) for one sample: the step model
// itself, evaluated with alpha = 1 and no bandwidth term, then with beta = 1 and no latency.
std::pair<double, double> coefficients(const TimedOp& s) {
  const double ca = step_time_ns(s.kind, s.group, s.bytes, peers(s), std::numeric_limits<double>::infinity(), 1.0);
  const double cb = step_time_ns(s.kind, s.group, s.bytes, peers(s), 8.0, 0.0);
  return {ca, cb};
}

}  // namespace

ChannelFit fit_channel(const std::vector<TimedOp>& samples) {
  std::set<double> sizes;
  for (const auto& s : samples) {
    if (!(s.time_ns > 0) || !std::isfinite(s.time_ns))
      throw InputError("channel fit",
                       fmt::format("a {} of {} bytes took {} ns (must be > 0)", to_string(s.kind), s.bytes, s.time_ns));
    if (s.group < 2) throw InputError("channel fit", fmt::format("a group of {} ranks measures no channel", s.group));
    sizes.insert(s.bytes);
  }
  if (sizes.size() < 2) throw InputError("channel fit", "needs measurements of at least two sizes");
  // Weighted normal equations of min sum ((ca a + cb b - t) / t)^2.
  double aa = 0, ab = 0, bb = 0, at = 0, bt = 0;
  for (const auto& s : samples) {
    const auto [ca, cb] = coefficients(s);
    const double w = 1.0 / (s.time_ns * s.time_ns);
    aa += w * ca * ca;
    ab += w * ca * cb;
    bb += w * cb * cb;
    at += w * ca * s.time_ns;
    bt += w * cb * s.time_ns;
  }
  const double det = aa * bb - ab * ab;
  double alpha = det > 0 ? (at * bb - bt * ab) / det : -1;
  double beta = det > 0 ? (aa * bt - ab * at) / det : -1;
  if (alpha < 0 || beta <= 0) {
    // On the boundary: the better of "no latency" and "no time per byte".
    const double beta_only = bb > 0 ? bt / bb : 0, alpha_only = aa > 0 ? at / aa : 0;
    const auto cost = [&](double a, double b) {
      double e = 0;
      for (const auto& s : samples) {
        const auto [ca, cb] = coefficients(s);
        e += std::pow((ca * a + cb * b - s.time_ns) / s.time_ns, 2);
      }
      return e;
    };
    if (beta_only > 0 && cost(0, beta_only) <= cost(alpha_only, 0)) {
      alpha = 0;
      beta = beta_only;
    } else {
      alpha = alpha_only;
      beta = 0;
    }
  }
  ChannelFit fit;
  fit.latency_ns = alpha;
  // No time per byte at all (every size took as long): a bandwidth no measurement bounds.
  fit.bandwidth_gbps = beta > 0 ? 8.0 / beta : 1e9;
  fit.samples = static_cast<int>(samples.size());
  double sum = 0;
  for (const auto& s : samples) {
    const double rel =
        std::abs(step_time_ns(s.kind, s.group, s.bytes, peers(s), fit.bandwidth_gbps, alpha) - s.time_ns) / s.time_ns;
    sum += rel * rel;
    fit.max_relative_error = std::max(fit.max_relative_error, rel);
  }
  fit.rms_relative_error = std::sqrt(sum / static_cast<double>(samples.size()));
  return fit;
}

}  // namespace chorus::syndicate
