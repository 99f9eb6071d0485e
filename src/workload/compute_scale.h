#pragma once
// A what-if on the accelerator (docs/capture.md, "What-ifs"): every compute node of a DAG `rate`
// times as fast. A node with a fixed duration (a capture's measured operator) takes duration / rate;
// a roofline node's FLOPs and bytes are divided by `rate`, so its roofline time
// max(flops / peak, bytes / bandwidth) is divided by it too. Communication is unchanged.
#include <string>

#include "workload/dag.h"

namespace chorus::workload {

// InputError naming `field` unless rate > 0 (and finite).
void scale_compute(Dag& dag, double rate, const std::string& field);

}  // namespace chorus::workload
