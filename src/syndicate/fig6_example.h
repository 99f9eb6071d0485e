#pragma once
// The worked example of SYNDICATE Fig. 6 (Sec. 3.1.2), built in as workload `syndicate-fig6` for
// topology `syndicate-fig6` (one time unit = 1 ms). The paper gives the shape (an all-to-all a and
// three all-reduces b, c, d; all-reduce as ring or tree on NVLink + GPUDirect RDMA; all-to-all on
// NVLink + RDMA or, slower, on PCIe + TCP; greedy 11 units, SYNDICATE 9.5) but not the durations;
// these are constructed so that both numbers follow (derivation: docs/syndicate.md):
//   X (1) -> a, b;  X -> Y (1) -> c;  Y, a -> Z (2.5) -> d;  end after b, c, d, Z
//   costs: a 2.5 (NVLink+RDMA) or 3.5 (PCIe+TCP); b, c, d ring 2.5, tree 3 (NVLink+RDMA)
// Greedy: all four on NVLink+RDMA, 10 units of communication on one path from t = 1: 11.
// SYNDICATE: a on PCIe+TCP from t = 1 (ends 4.5) beside b (1-3.5) and c (3.5-6); Z 4.5-7; d 7-9.5.
// Unrolled over `iterations` (each iteration's X after the previous end): iteration time is
// exact in both.
#include "workload/dag.h"

namespace chorus::syndicate {

workload::Dag fig6_workload(int iterations = 2);

}  // namespace chorus::syndicate
