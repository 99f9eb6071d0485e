#pragma once
// The capture's step times from the ranks' step ends (capture_run.h, StepTimes).
#include <cstdint>
#include <vector>

#include "capture/capture_run.h"

namespace chorus::capture {

// Per rank, its steps' ends on one clock; the window is steps first .. last - 1. Step k lasts from
// end k - 1 to end k; step 0 is not timed, and the outside steps are the unrecorded ones: neither
// last + 1 .. host_window_write_step + 1 (the wait after the window's writing, the host window, its
// writing and the wait after it).
// The host window (python/chorus/capture) is steps last + 2 .. last + 1 + max(last - first, 5); the
// step after it writes its trace: this one.
int host_window_write_step(int first, int last);

StepTimes step_times(const std::vector<std::vector<std::int64_t>>& step_end_ns, int first, int last);

}  // namespace chorus::capture
