#pragma once
// The Ideal reference of Themis Table 3: 100 % of every dimension's bandwidth is used.
// Read exactly: the bytes each NPU must send at minimum, divided by the NPU's total
// bandwidth over all dimensions.
//   all-reduce:                        2 (P-1)/P * S
//   reduce-scatter, all-gather, a2a:     (P-1)/P * S
// (S as in coll/collective.h; P = all NPUs). The paper's "collective size / total BW"
// read this way is what makes its 95 % average utilization physically possible.
#include "coll/collective.h"
#include "net/network.h"

namespace chorus::sched {

double ideal_bytes_per_npu(const net::Network& network, CollectiveKind op, double size_bytes);
double ideal_time_ns(const net::Network& network, CollectiveKind op, double size_bytes);

}  // namespace chorus::sched
