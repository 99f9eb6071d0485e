#pragma once
// Themis's Latency Model (Sec. 4.2, 4.4): predicts the load a chunk puts on each
// dimension. Only the bandwidth term n_K^i x B_K counts; the fixed delay A_K is
// accounted once, when the Dim Load Tracker is reset.
#include <vector>

#include "coll/collective.h"
#include "net/network.h"

namespace chorus::sched {

class LatencyModel {
 public:
  explicit LatencyModel(const net::Network& network) : network_(network) {}

  // Load (ns) that a chunk of `chunk_bytes` puts on each dimension when it runs `phase`
  // over the dimensions in `order`. For an all-gather, `chunk_bytes` is the gathered size.
  std::vector<double> calc_loads(double chunk_bytes, const std::vector<int>& order, coll::Phase phase) const;

  // n x B of a single stage of `phase` of size `bytes` on `dim` (RS convention: resident size;
  // AG convention: gathered size).
  double stage_load_ns(int dim, coll::Phase phase, double bytes) const;

  // A_K of one stage of `phase` on every dimension.
  std::vector<double> fixed_delays_ns(coll::Phase phase) const;

 private:
  const net::Network& network_;
};

// Themis's Dim Load Tracker: the total predicted load placed on each dimension so far.
class DimLoadTracker {
 public:
  void reset(std::vector<double> initial_loads_ns) { loads_ = std::move(initial_loads_ns); }
  const std::vector<double>& loads() const { return loads_; }
  void update(const std::vector<double>& new_load_ns) {
    for (size_t k = 0; k < loads_.size(); ++k) loads_[k] += new_load_ns[k];
  }

 private:
  std::vector<double> loads_;
};

}  // namespace chorus::sched
